/** `allowList`: clients that are never limited, by IP or identity, or as a function decides. */
import { isIP } from 'node:net';
import { ipIdentity } from './client-ip.js';
import type { RequestAccess } from './request-keys.js';

/**
 * Clients that are never charged and get no rate-limit headers: a list of client IPs (`'203.0.113.7'`,
 * `'2001:db8::1'`, as the framework resolves them) and identities (`'user:admin'`, as the key function
 * returns them), or a function of the request and its identity (sync or async).
 */
export type AllowList<Req> = readonly string[] | ((request: Req, key: string) => boolean | Promise<boolean>);

/** Decides whether a request is allow-listed, given its identity. */
export type AllowListed<Req> = (request: Req, key: string) => boolean | Promise<boolean>;

/**
 * Checks the `allowList` option; throws a `TypeError` naming `what`.
 *
 * @example
 * allowListOption(['10.0.0.1', 'user:admin'], '@tollgate/express: allowList');
 */
export function allowListOption(value: unknown, what: string): AllowList<unknown> | undefined {
  if (value === undefined || typeof value === 'function') return value as AllowList<unknown> | undefined;
  if (!Array.isArray(value))
    throw new TypeError(`${what} must be an array of IPs and identities, or a function`);
  for (const entry of value) {
    if (typeof entry !== 'string' || entry === '') {
      throw new TypeError(`${what} must hold only non-empty strings; got ${String(entry)}`);
    }
  }
  return value as readonly string[];
}

/**
 * The allow-list as one function, built once: a list becomes two sets, IPs (compared in one spelling,
 * so `::ffff:10.0.0.1` is `10.0.0.1`) and identities. `undefined` for none, so the check costs nothing.
 *
 * @example
 * const allowListed = compileAllowList(['10.0.0.1'], expressAccess);
 * allowListed?.(req, 'ip:10.0.0.1'); // true when req.ip is 10.0.0.1
 */
export function compileAllowList<Req>(
  allowList: AllowList<Req> | undefined,
  access: RequestAccess<Req>,
): AllowListed<Req> | undefined {
  if (allowList === undefined || typeof allowList === 'function') return allowList;
  if (allowList.length === 0) return undefined;
  const ips = new Set<string>();
  const identities = new Set<string>();
  for (const entry of allowList) {
    // An IP is compared as the framework resolved it (under its trusted-proxy setting), never as a
    // header says: a client cannot allow-list itself by writing X-Forwarded-For.
    if (isIP(entry.split('%')[0] as string)) ips.add(ipIdentity(entry, false) as string);
    else identities.add(entry);
  }
  return function allowListed(request, key) {
    if (identities.has(key)) return true;
    return ips.size > 0 && ips.has(ipIdentity(access.ip(request), false) as string);
  };
}
