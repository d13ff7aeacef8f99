/** `allowList`: clients that are never limited, by IP, CIDR range or identity, or as a function decides. */
import { isIPv4 } from 'node:net';
import { TollgateOptionError } from '../../support/option-error.js';
import {
  type ClientAddress,
  embeddedIPv4,
  readClientAddress,
  readExactAddress,
  readIPv6Groups,
} from './client-ip.js';
import type { RequestAccess } from './request-keys.js';

/**
 * Clients that are never charged and get no rate-limit headers: a list of client IPs (`'203.0.113.7'`,
 * `'2001:db8::1'`) and CIDR ranges (`'10.0.0.0/8'`, `'2001:db8::/32'`), compared with the client IP as
 * the framework resolves it, and identities (`'user:admin'`, as the key function returns them); or a
 * function of the request and its identity (sync or async).
 *
 * An entry is read as an IP or range when it starts (after any spaces or a `[`) with hex digits, dots
 * and colons, one dot or colon at least, up to its end or a `/`, `%`, `]` or space: `'10.0.0.1'`,
 * `'::1'`, `'10.0.0.0/8 '`. Such an entry must be exactly an IP, or an IP, `/` and a prefix length
 * (0–32 for IPv4, 0–128 for IPv6; host bits are ignored), or construction throws a `TypeError`: no
 * spaces, brackets, port or zone index (`%eth0` names an interface of this host, not a client). Any
 * other entry is an identity.
 *
 * An IPv4 client written as IPv6 (`::ffff:10.0.0.1`, NAT64 `64:ff9b::a00:1`, SIIT, compatible) is
 * matched as its IPv4 address, and an entry in those forms as the IPv4 address or range it embeds
 * (`'::ffff:10.0.0.0/104'` is `'10.0.0.0/8'`). An IPv6 range shorter than /96 that would hold such a
 * prefix (`'::/0'`, `'64:ff9b::/64'`) is refused: write the IPv4 range for those clients.
 *
 * @example
 * rateLimit({ limit: 100, window: '1m', allowList: ['10.0.0.0/8', '2001:db8::/32', 'user:admin'] });
 */
export type AllowList<Req> = readonly string[] | ((request: Req, key: string) => boolean | Promise<boolean>);

/** Decides whether a request is allow-listed, given its identity. */
export type AllowListed<Req> = (request: Req, key: string) => boolean | Promise<boolean>;

/** An IPv4 range with its mask worked out: `address & mask` is `network` for the addresses in it. */
interface IPv4Range {
  readonly network: number;
  readonly mask: number;
}

/** An IPv6 range, group by group, as {@link IPv4Range}. */
interface IPv6Range {
  readonly network: readonly number[];
  readonly mask: readonly number[];
}

/** The address entries of a list, built once, so that a request costs one parse of its IP. */
interface AddressEntries {
  /** Single IPv4 addresses, by their 32 bits: the usual entry, looked up at once. */
  readonly ipv4s: Set<number>;
  readonly ipv4Ranges: IPv4Range[];
  /** IPv6 addresses (as /128) and ranges; compared in turn, so a very long list is a function's job. */
  readonly ipv6Ranges: IPv6Range[];
}

/** "Looks like an address": hex digits, dots and colons, up to the end or what may follow an address. */
const ADDRESS_LIKE = /^\s*\[?[\da-f.:]*[.:][\da-f.:]*(?:[/%\]\s]|$)/i;

/** An address, then optionally `/` and a prefix length written without leading zeros. */
const ADDRESS_AND_PREFIX = /^([^/]*)(?:\/(0|[1-9]\d{0,2}))?$/;

/** The IPv6 prefixes whose addresses are IPv4 clients, and so are matched as IPv4. */
const IPV4_PREFIXES = ['::ffff:0:0', '::ffff:0:0:0', '64:ff9b::', '::'].map(
  (prefix) => readIPv6Groups(prefix) as number[],
);

/**
 * Checks the `allowList` option; throws a `TypeError` naming `what`, also for an entry that looks like
 * an IP or range and is not one (see {@link AllowList}).
 *
 * @example
 * allowListOption(['10.0.0.1', '10.1.0.0/16', 'user:admin'], '@tollgate/express: allowList');
 */
export function allowListOption(value: unknown, what: string): AllowList<unknown> | undefined {
  if (value === undefined || typeof value === 'function') return value as AllowList<unknown> | undefined;
  if (!Array.isArray(value))
    throw new TollgateOptionError(`${what} must be an array of IPs and identities, or a function`);
  for (const entry of value) {
    if (typeof entry !== 'string' || entry === '') {
      throw new TollgateOptionError(`${what} must hold only non-empty strings; got ${String(entry)}`);
    }
    addressEntry(entry, what);
  }
  return value as readonly string[];
}

/**
 * The allow-list as one function, built once: a list becomes its identities and its address entries
 * (single IPv4 addresses in a set, ranges with their masks worked out). A request whose IP cannot be
 * read is never allow-listed by address. `undefined` for none, so the check costs nothing.
 *
 * @example
 * const allowListed = compileAllowList(['10.0.0.0/8'], expressAccess);
 * allowListed?.(req, 'ip:10.1.2.3'); // true when req.ip is in 10.0.0.0/8
 */
export function compileAllowList<Req>(
  allowList: AllowList<Req> | undefined,
  access: RequestAccess<Req>,
): AllowListed<Req> | undefined {
  if (allowList === undefined || typeof allowList === 'function') return allowList;
  if (allowList.length === 0) return undefined;
  const identities = new Set<string>();
  const addresses: AddressEntries = { ipv4s: new Set(), ipv4Ranges: [], ipv6Ranges: [] };
  for (const entry of allowList) {
    const range = addressEntry(entry, 'allowList');
    if (range === undefined) identities.add(entry);
    else if (isIPv6Range(range)) addresses.ipv6Ranges.push(range);
    else if (range.mask === 0xffffffff) addresses.ipv4s.add(range.network);
    else addresses.ipv4Ranges.push(range);
  }
  const anyAddress = identities.size < allowList.length;
  return function allowListed(request, key) {
    if (identities.has(key)) return true;
    // An IP is compared as the framework resolved it (under its trusted-proxy setting), never as a
    // header says: a client cannot allow-list itself by writing X-Forwarded-For.
    return anyAddress && listsAddress(addresses, readClientAddress(access.ip(request)));
  };
}

/** Loops rather than `some`: this runs on every request, and a closure per call is an allocation. */
function listsAddress(entries: AddressEntries, address: ClientAddress | undefined): boolean {
  if (address === undefined) return false;
  if (typeof address === 'number') {
    if (entries.ipv4s.has(address)) return true;
    for (const range of entries.ipv4Ranges) if ((address & range.mask) >>> 0 === range.network) return true;
    return false;
  }
  for (const range of entries.ipv6Ranges) if (inIPv6Range(range, address)) return true;
  return false;
}

function isIPv6Range(range: IPv4Range | IPv6Range): range is IPv6Range {
  return typeof range.network !== 'number';
}

function inIPv6Range(range: IPv6Range, groups: readonly number[]): boolean {
  for (let i = 0; i < 8; i++) {
    if (((groups[i] as number) & (range.mask[i] as number)) !== range.network[i]) return false;
  }
  return true;
}

/** The range an entry names, or `undefined` for an identity; throws for a malformed address. */
function addressEntry(entry: string, what: string): IPv4Range | IPv6Range | undefined {
  if (!ADDRESS_LIKE.test(entry)) return undefined;
  const [, text = '', prefixText] = ADDRESS_AND_PREFIX.exec(entry) ?? [];
  const prefix = prefixText === undefined ? undefined : Number(prefixText);
  if (isIPv4(text)) {
    if (prefix !== undefined && prefix > 32) throw malformed(what, entry, 'an IPv4 prefix length is 0 to 32');
    return ipv4Range(readExactAddress(text) as number, prefix ?? 32);
  }
  const groups = readIPv6Groups(text);
  if (groups === undefined) throw malformed(what, entry, notAnAddress(entry));
  if (prefix !== undefined && prefix > 128) throw malformed(what, entry, 'an IPv6 prefix length is 0 to 128');
  if (prefix === undefined || prefix === 128) {
    const address = readExactAddress(text) as ClientAddress;
    return typeof address === 'number' ? ipv4Range(address, 32) : ipv6Range(address, 128);
  }
  const embedded = prefix >= 96 ? embeddedIPv4(groups) : undefined;
  if (embedded !== undefined) return ipv4Range(embedded, prefix - 96);
  const range = ipv6Range(groups, prefix);
  if (IPV4_PREFIXES.some((ipv4Prefix) => inIPv6Range(range, ipv4Prefix))) {
    throw new TollgateOptionError(
      `${what}: ${JSON.stringify(entry)} holds IPv6 forms of IPv4 addresses (::ffff:0:0/96, ::ffff:0:0:0/96, ` +
        '64:ff9b::/96, ::/96), and those clients are matched as IPv4: list IPv4 ranges for them, and IPv6 ' +
        'ranges that leave these prefixes out',
    );
  }
  return range;
}

function notAnAddress(entry: string): string {
  if (entry.includes('%')) {
    return 'a zone index (%…) names an interface of this host, not a client: drop it';
  }
  return (
    "write an IP ('10.0.0.1', '2001:db8::1') or a CIDR range ('10.0.0.0/8', '2001:db8::/32'), " +
    'with no spaces, brackets or port'
  );
}

function malformed(what: string, entry: string, reason: string): TypeError {
  return new TollgateOptionError(
    `${what}: ${JSON.stringify(entry)} looks like an IP or CIDR range but is not one; ${reason}`,
  );
}

function ipv4Range(address: number, prefix: number): IPv4Range {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { network: (address & mask) >>> 0, mask };
}

function ipv6Range(groups: readonly number[], prefix: number): IPv6Range {
  const mask = groups.map((_, i) => {
    const bits = Math.min(16, Math.max(0, prefix - i * 16));
    return (0xffff << (16 - bits)) & 0xffff;
  });
  return { network: groups.map((group, i) => group & (mask[i] as number)), mask };
}
