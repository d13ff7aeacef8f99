/**
 * The identity a request is charged to: the key function's answer, else the client IP. One rule for the
 * rate and the concurrency limiters, so neither can pool clients the other keeps apart.
 */

import { TollgateOptionError } from '../../support/option-error.js';
import type { Warnings } from '../../support/warnings.js';
import { ClientAddressError } from './client-address-error.js';
import { addressIdentity, DEFAULT_IPV6_SUBNET, isUnparsedAddress } from './client-ip.js';
import { type ClientIpSetting, clientIpWords } from './client-ip-setting.js';
import type { KeyFunction, RequestAccess } from './request-keys.js';

const MISSING_KEY = 'the key function returned nothing; such requests are limited by client IP';

/** Who the identity is for, in messages: the adapter (`AdapterSettings` is one). */
export interface IdentitySettings {
  /** Starts every error message: `'@tollgate/express'`. */
  readonly adapter: string;
  /** The adapter's words for its client-IP setting, which the warnings name. Default: neutral words. */
  readonly clientIpSetting?: ClientIpSetting | undefined;
}

/**
 * The identity of a request, built once per limiter: at once when the key function answers at once (no
 * turn of the event loop), else a promise. Throws (or rejects) a `TypeError` when the key function
 * returns something other than a string or `undefined` (an app bug must not let requests through
 * unlimited), and a {@link ClientAddressError} when there is neither an identity nor a client IP. A
 * client address that is not an IP is reported once (`TOLLGATE_UNPARSED_IP`), whether `byIp()` (the
 * default key, or the last of a `firstOf`) or the fallback of another key met it.
 *
 * @example
 * const identityOf = requestIdentity(byUser((req) => req.user?.id), expressAccess, warnings, { adapter: '@tollgate/express' });
 * const identity = await identityOf(req); // 'user:42', or 'ip:203.0.113.7' when signed out
 */
export function requestIdentity<Req>(
  key: KeyFunction<Req>,
  access: RequestAccess<Req>,
  warnings: Warnings,
  { adapter, clientIpSetting }: IdentitySettings,
): (request: Req) => string | Promise<string> {
  const { name: setting, noAddress } = clientIpWords(clientIpSetting);
  const unparsedAddress =
    'the framework gave a client IP that is not an IP address (a proxy wrote something else in ' +
    'X-Forwarded-For): each such value is limited as a bucket of its own. Check what the proxy ' +
    `forwards, and ${setting}`;
  // Until it is said, each identity is looked at: one prefix check. Said, or switched off, it costs nothing.
  let unparsedDue = warnings.due('TOLLGATE_UNPARSED_IP');

  function reportUnparsed(identity: string): boolean {
    if (!isUnparsedAddress(identity)) return false;
    unparsedDue = false;
    warnings.once('TOLLGATE_UNPARSED_IP', unparsedAddress);
    return true;
  }

  function checked(identity: unknown, request: Req): string {
    if (typeof identity === 'string' && identity !== '') {
      // byIp()'s own bucket for an address it could not read: as safe as the fallback's, and as worth saying.
      if (unparsedDue) reportUnparsed(identity);
      return identity;
    }
    if (identity !== undefined && identity !== '') {
      throw new TollgateOptionError(
        `${adapter}: the key function must return a string or undefined; got ${typeof identity}`,
      );
    }
    // Falling back to the IP keeps one anonymous client from exhausting a bucket that all of them share.
    const ip = addressIdentity(access.ip(request), DEFAULT_IPV6_SUBNET);
    if (ip === undefined) {
      // One bucket shared by every request without an address would let one client lock all the others
      // out. (A client that hung up has no address either; the lifecycle answers it to nobody.)
      warnings.once('TOLLGATE_MISSING_IP', noAddress);
      throw new ClientAddressError(`${adapter}: ${noAddress}`);
    }
    if (!reportUnparsed(ip)) warnings.once('TOLLGATE_MISSING_KEY', MISSING_KEY);
    return ip;
  }

  return function identityOf(request) {
    const identity: unknown = key(request, access);
    return isPromiseLike(identity)
      ? Promise.resolve(identity).then((resolved) => checked(resolved, request))
      : checked(identity, request);
  };
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
