/**
 * Reading a request that carries no client address of its own (a Fetch `Request`; a Hono context, whose
 * runtime knows it): the app's functions give the address. Without them all clients would share one
 * bucket, which is refused here, once for every such adapter.
 */

import { TollgateOptionError } from '../../support/option-error.js';
import type { RequestAccess } from './request-keys.js';

/** The functions {@link suppliedAddressAccess} reads a request with. */
export interface SuppliedAddress<Req> {
  /** The client IP, as the app resolves it (behind a proxy, from the header it sets). Default: `peer`. */
  readonly ip?: ((request: Req) => string | undefined) | undefined;
  /** The address of whoever connected (the proxy, when there is one). Default: `ip`. */
  readonly peer?: ((request: Req) => string | undefined) | undefined;
  /** A request header's first value; `name` is lower case. */
  header(request: Req, name: string): string | undefined;
}

/**
 * How the core reads a request whose address the app supplies. When neither `ip` nor `peer` is given
 * and the limiter has no `key` of its own either, every client would share one bucket: that throws a
 * `TypeError`, starting with `adapter`, whose text is `missing` (what to give, for this adapter); so
 * does an `ip` or `peer` that is not a function.
 *
 * @example
 * suppliedAddressAccess({ ip, header: (request, name) => request.headers.get(name) ?? undefined },
 *   { adapter: '@tollgate/fetch', key: options.key, missing: 'give ip, or a key that identifies every request' });
 */
export function suppliedAddressAccess<Req>(
  { ip, peer, header }: SuppliedAddress<Req>,
  { adapter, key, missing }: { readonly adapter: string; readonly key: unknown; readonly missing: string },
): RequestAccess<Req> {
  const given = [ip, peer].filter((read) => read !== undefined);
  if (given.some((read) => typeof read !== 'function') || (given.length === 0 && key === undefined)) {
    throw new TollgateOptionError(
      `${adapter}: ${missing}: without either, all clients would share one bucket`,
    );
  }
  const socketIp = peer ?? ip ?? noAddress;
  return { ip: ip ?? socketIp, socketIp, header };
}

function noAddress(): undefined {
  return undefined;
}
