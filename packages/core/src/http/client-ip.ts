/**
 * Client IPs as rate-limit identities. An IPv6 client usually controls a whole /64 or more, so keying on
 * the full address would let one user rotate through 2^64 buckets: IPv6 addresses are grouped by subnet.
 * An IPv4 address reached over a dual-stack socket arrives as `::ffff:a.b.c.d`; it is the same client as
 * `a.b.c.d`, so it is keyed as IPv4.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The default IPv6 prefix length: /56 is the smallest block commonly delegated to one customer. */
export const DEFAULT_IPV6_SUBNET = 56;

/**
 * The identity of a client IP: `ip:1.2.3.4`, or for IPv6 its subnet, `ip:2001:db8:ab:cd00::/56`.
 * `ipv6Subnet: false` keys each IPv6 address on its own. Returns `undefined` for anything that is not an IP.
 *
 * @example
 * ipIdentity('::ffff:10.0.0.1', 56);         // 'ip:10.0.0.1'
 * ipIdentity('2001:db8::1', 56);             // 'ip:2001:db8::/56'
 */
export function ipIdentity(ip: string | undefined, ipv6Subnet: number | false): string | undefined {
  if (!ip) return undefined;
  if (isIPv4(ip)) return `ip:${ip}`;
  const address = ip.split('%')[0] as string; // a zone index names an interface, not a client
  if (!isIPv6(address)) return undefined;
  const groups = parseIPv6(address);
  if (isMappedIPv4(groups))
    return `ip:${groups[6] >> 8}.${groups[6] & 0xff}.${groups[7] >> 8}.${groups[7] & 0xff}`;
  if (ipv6Subnet === false || ipv6Subnet === 128) return `ip:${formatIPv6(groups)}`;
  return `ip:${formatIPv6(maskIPv6(groups, ipv6Subnet))}/${ipv6Subnet}`;
}

/** `::ffff:a.b.c.d` in any spelling (`0:0:0:0:0:ffff:0102:0304` too). */
function isMappedIPv4(groups: number[]): groups is [0, 0, 0, 0, 0, 0xffff, number, number] {
  return groups.length === 8 && groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
}

/** Eight 16-bit groups. Callers pass only strings `isIPv6` accepted. */
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

function maskIPv6(groups: number[], prefixLength: number): number[] {
  return groups.map((group, i) => {
    const bits = Math.min(16, Math.max(0, prefixLength - i * 16));
    return group & (0xffff << (16 - bits)) & 0xffff;
  });
}

/** RFC 5952 text: lower case, no leading zeros, the longest run of two or more zero groups as `::`. */
function formatIPv6(groups: number[]): string {
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
