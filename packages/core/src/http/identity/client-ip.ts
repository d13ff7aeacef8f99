/**
 * Client IPs as rate-limit identities. An IPv6 client usually controls a whole /64 or more, so keying on
 * the full address would let one user rotate through 2^64 buckets: IPv6 addresses are grouped by subnet.
 * An IPv4 client can also arrive written as IPv6: `::ffff:a.b.c.d` over a dual-stack socket, and the
 * NAT64 (`64:ff9b::/96`), SIIT (`::ffff:0:0:0/96`) and deprecated compatible (`::/96`) forms through
 * translators. Each is that one IPv4 client, so it is keyed as IPv4: grouped as an IPv6 /56, every
 * client behind one NAT64 gateway would share a bucket.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { hashIdentity } from '../../support/identity.js';

/** The default IPv6 prefix length: /56 is the smallest block commonly delegated to one customer. */
export const DEFAULT_IPV6_SUBNET = 56;

/** The prefix of identities {@link addressIdentity} gives addresses it cannot read. */
const UNPARSED_PREFIX = 'ip-unparsed:';

/**
 * A client address as read: an IPv4 address (also one written as IPv6) as its 32 bits, or any other
 * IPv6 address as its eight 16-bit groups.
 */
export type ClientAddress = number | readonly number[];

/**
 * The identity of a client IP: `ip:1.2.3.4`, or for IPv6 its subnet, `ip:2001:db8:ab:cd00::/56`.
 * `ipv6Subnet: false` keys each IPv6 address on its own. An IPv4 address written as IPv6 (mapped, NAT64,
 * SIIT, compatible) is keyed as the IPv4 address. Reads the value as proxies send it: spaces around it,
 * a port (`203.0.113.5:51234`, `[2001:db8::1]:443`), brackets and a zone index (`%eth0`) are dropped.
 * Returns `undefined` for anything that is not an IP (see {@link addressIdentity}).
 *
 * @example
 * ipIdentity('::ffff:10.0.0.1', 56);         // 'ip:10.0.0.1'
 * ipIdentity('64:ff9b::c000:201', 56);       // 'ip:192.0.2.1'
 * ipIdentity('[2001:db8::1]:443', 56);       // 'ip:2001:db8::/56'
 */
export function ipIdentity(ip: string | undefined, ipv6Subnet: number | false): string | undefined {
  if (!ip) return undefined;
  // The common case, a plain IPv4 from the socket, costs this one check: the text is already canonical.
  if (isIPv4(ip)) return `ip:${ip}`;
  const address = readForwardedAddress(ip);
  if (address === undefined) return undefined;
  if (typeof address === 'number') return `ip:${formatIPv4(address)}`;
  if (ipv6Subnet === false || ipv6Subnet === 128) return `ip:${formatIPv6(address)}`;
  return `ip:${formatIPv6(maskIPv6(address, ipv6Subnet))}/${ipv6Subnet}`;
}

/**
 * The identity of a client address, whatever the framework gave: {@link ipIdentity} when it is an IP;
 * for any other non-empty value a bucket of its own, `ip-unparsed:sha256:<SHA-256 of the value,
 * base64url>`, so clients whose addresses cannot be read never share one bucket, and the key stays short
 * and plain whatever bytes the value held. `undefined` only for no value (`undefined` or `''`).
 *
 * @example
 * addressIdentity('203.0.113.5:51234', 56);  // 'ip:203.0.113.5'
 * addressIdentity('garbage-1', 56);          // 'ip-unparsed:sha256:…' (43 base64url characters)
 */
export function addressIdentity(raw: string | undefined, ipv6Subnet: number | false): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  return ipIdentity(raw, ipv6Subnet) ?? `${UNPARSED_PREFIX}${hashIdentity(raw)}`;
}

/**
 * Whether `identity` is one {@link addressIdentity} gave an address it could not read as an IP.
 *
 * @example
 * isUnparsedAddress(addressIdentity('garbage', 56) as string); // true
 */
export function isUnparsedAddress(identity: string): boolean {
  return identity.startsWith(UNPARSED_PREFIX);
}

/**
 * A client IP as {@link ipIdentity} reads it (ports, brackets, zone and spaces dropped), as numbers for
 * range checks; `undefined` when it is not an IP.
 *
 * @example
 * readClientAddress('::ffff:10.0.0.1'); // 0x0a000001
 */
export function readClientAddress(ip: string | undefined): ClientAddress | undefined {
  if (!ip) return undefined;
  return isIPv4(ip) ? ipv4Bits(ip) : readForwardedAddress(ip);
}

/**
 * Exactly an IP, nothing around it (no port, brackets, zone or spaces), as numbers; `undefined` for
 * anything else. For configured addresses, which should say exactly what they mean.
 *
 * @example
 * readExactAddress('64:ff9b::10.0.0.1'); // 0x0a000001
 */
export function readExactAddress(text: string): ClientAddress | undefined {
  if (isIPv4(text)) return ipv4Bits(text);
  const groups = readIPv6Groups(text);
  if (groups === undefined) return undefined;
  return (isUnspecifiedOrLoopback(groups) ? undefined : embeddedIPv4(groups)) ?? groups;
}

/**
 * Exactly an IPv6 address (no zone index) as its eight 16-bit groups, whatever it embeds.
 *
 * @example
 * readIPv6Groups('2001:db8::1'); // [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]
 */
export function readIPv6Groups(text: string): number[] | undefined {
  return isIPv6(text) && !text.includes('%') ? parseIPv6(text) : undefined;
}

/**
 * The IPv4 address in the last 32 bits, when the first 96 are a prefix that embeds one: mapped
 * `::ffff:0:0/96`, SIIT `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96` (RFC 6052), compatible `::/96`.
 *
 * @example
 * embeddedIPv4([0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x201]); // 0xc0000201, 192.0.2.1
 */
export function embeddedIPv4(groups: readonly number[]): number | undefined {
  const [a, b, c, d, e, f, g, h] = groups as [number, number, number, number, number, number, number, number];
  if (c !== 0 || d !== 0) return undefined;
  const embeds =
    a === 0x64 && b === 0xff9b
      ? e === 0 && f === 0
      : a === 0 && b === 0 && ((e === 0 && (f === 0 || f === 0xffff)) || (e === 0xffff && f === 0));
  return embeds ? ((g << 16) | h) >>> 0 : undefined;
}

/** Parses what proxies write: an address with spaces, brackets, a port or a zone index around it. */
function readForwardedAddress(ip: string): ClientAddress | undefined {
  const text = ip.trim();
  if (text.startsWith('[')) {
    // Only IPv6 is bracketed (RFC 3986), and only so that a port can follow: `[2001:db8::1]:443`.
    const close = text.indexOf(']');
    const inner = close > 0 && isPortOrEnd(text, close + 1) ? withoutZone(text.slice(1, close)) : '';
    return isIPv6(inner) ? readExactAddress(inner) : undefined;
  }
  const colon = text.indexOf(':');
  if (colon >= 0 && colon === text.lastIndexOf(':')) {
    // One colon: an IPv4 address and its port, as Azure Application Gateway, Front Door and IIS ARR
    // forward it. IPv6 has two colons at least, so its last group is never taken for a port.
    const host = text.slice(0, colon);
    return isIPv4(host) && isPortOrEnd(text, colon) ? ipv4Bits(host) : undefined;
  }
  if (isIPv4(text)) return ipv4Bits(text);
  const address = withoutZone(text); // a zone index names an interface of this host, not a client
  return isIPv6(address) ? readExactAddress(address) : undefined;
}

/** Whether `text` ends at `from`, or goes on with `:` and a port number. */
function isPortOrEnd(text: string, from: number): boolean {
  if (from === text.length) return true;
  const port = text.slice(from + 1);
  return text[from] === ':' && /^\d{1,5}$/.test(port) && Number(port) <= 65_535;
}

function withoutZone(text: string): string {
  const percent = text.indexOf('%');
  return percent < 0 ? text : text.slice(0, percent);
}

/** `::` and `::1` lie in the compatible `::/96` but are IPv6's own unspecified and loopback addresses. */
function isUnspecifiedOrLoopback(groups: readonly number[]): boolean {
  return groups.every((group, i) => group === 0 || (i === 7 && group === 1));
}

/** The 32 bits of a dotted IPv4 address that `isIPv4` accepted, read without allocating. */
function ipv4Bits(text: string): number {
  let bits = 0;
  let octet = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 46 /* . */) {
      bits = bits * 256 + octet;
      octet = 0;
    } else octet = octet * 10 + (code - 48);
  }
  return bits * 256 + octet;
}

function formatIPv4(bits: number): string {
  return `${bits >>> 24}.${(bits >>> 16) & 0xff}.${(bits >>> 8) & 0xff}.${bits & 0xff}`;
}

/** Eight 16-bit groups. Callers pass only strings `isIPv6` accepted, without a zone index. */
function parseIPv6(address: string): number[] {
  let text = address.toLowerCase();
  const embedded = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (embedded) {
    const [a, b, c, d] = (embedded[1] as string).split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, embedded.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = Array(8 - headGroups.length - tailGroups.length).fill('0');
  const groups = tail === undefined ? headGroups : [...headGroups, ...zeros, ...tailGroups];
  return groups.map((group) => Number.parseInt(group, 16));
}

function maskIPv6(groups: readonly number[], prefixLength: number): number[] {
  return groups.map((group, i) => {
    const bits = Math.min(16, Math.max(0, prefixLength - i * 16));
    return group & (0xffff << (16 - bits)) & 0xffff;
  });
}

/** RFC 5952 text: lower case, no leading zeros, the longest run of two or more zero groups as `::`. */
function formatIPv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
