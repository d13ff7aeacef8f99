import { describe, expect, it } from 'vitest';
import { DEFAULT_IPV6_SUBNET, ipIdentity } from '../../../src/http/identity/client-ip.js';

describe('ipIdentity for IPv4', () => {
  it('keys an IPv4 address as itself', () => {
    expect(ipIdentity('203.0.113.7', 56)).toBe('ip:203.0.113.7');
    expect(ipIdentity('203.0.113.7', false)).toBe('ip:203.0.113.7');
  });

  it.each(['::ffff:1.2.3.4', '::FFFF:1.2.3.4'])('keys the IPv4-mapped %s as the IPv4 client', (ip) => {
    expect(ipIdentity(ip, 56)).toBe('ip:1.2.3.4');
    expect(ipIdentity(ip, false)).toBe('ip:1.2.3.4');
  });

  // The same address as ::ffff:1.2.3.4, written out or in hex: it is still that IPv4 client, and must not
  // land in ::/56 together with ::1 and every other client spelled this way.
  it.each(['0:0:0:0:0:ffff:1.2.3.4', '::ffff:0102:0304', '::ffff:102:304'])(
    'keys the IPv4-mapped %s, in any spelling, as the IPv4 client',
    (ip) => {
      expect(ipIdentity(ip, 56)).toBe('ip:1.2.3.4');
    },
  );
});

describe('ipIdentity for IPv6', () => {
  it('groups by /56 by default', () => {
    expect(DEFAULT_IPV6_SUBNET).toBe(56);
    const inside = ipIdentity('2001:db8:ab:cd12::1', DEFAULT_IPV6_SUBNET);
    expect(inside).toBe('ip:2001:db8:ab:cd00::/56');
    expect(ipIdentity('2001:db8:ab:cdff:ffff:ffff:ffff:ffff', 56)).toBe(inside);
    expect(ipIdentity('2001:db8:ab:ce00::1', 56)).toBe('ip:2001:db8:ab:ce00::/56');
  });

  it('groups by /64 when asked', () => {
    const identity = ipIdentity('2001:db8:1:2:aaaa::1', 64);
    expect(identity).toBe('ip:2001:db8:1:2::/64');
    expect(ipIdentity('2001:db8:1:2:bbbb:cccc:dddd:eeee', 64)).toBe(identity);
    expect(ipIdentity('2001:db8:1:3::1', 64)).toBe('ip:2001:db8:1:3::/64');
  });

  it('masks prefixes that do not fall on a group boundary', () => {
    expect(ipIdentity('2001:db8:ffff::1', 36)).toBe('ip:2001:db8:f000::/36');
    expect(ipIdentity('ffff::', 1)).toBe('ip:8000::/1');
  });

  it.each([128, false] as const)('keys each address alone with %s', (subnet) => {
    expect(ipIdentity('2001:db8::1', subnet)).toBe('ip:2001:db8::1');
    expect(ipIdentity('2001:db8::2', subnet)).toBe('ip:2001:db8::2');
  });

  it.each([
    ['2001:db8::1', '2001:0db8:0000:0000:0000:0000:0000:0001'],
    ['2001:db8::1', '2001:DB8:0:0:0:0:0:1'],
    ['2001:db8:ab:cd12::1', '2001:0DB8:00AB:CD12:0:0:0:1'],
  ])('gives %s and %s the same identity', (compressed, uncompressed) => {
    for (const subnet of [56, 64, 128, false] as const) {
      expect(ipIdentity(uncompressed, subnet)).toBe(ipIdentity(compressed, subnet));
    }
  });

  it('writes addresses in RFC 5952 form: the first longest zero run becomes ::', () => {
    expect(ipIdentity('2001:db8:0:0:1:0:0:1', false)).toBe('ip:2001:db8::1:0:0:1');
    expect(ipIdentity('2001:db8:0:1:0:0:0:1', false)).toBe('ip:2001:db8:0:1::1');
    expect(ipIdentity('0:0:0:0:0:0:0:0', false)).toBe('ip:::');
  });

  it.each(['fe80::1%eth0', 'fe80::1%2', 'FE80::1%en0'])('strips the zone index of %s', (ip) => {
    expect(ipIdentity(ip, false)).toBe('ip:fe80::1');
    expect(ipIdentity(ip, 56)).toBe(ipIdentity('fe80::1', 56));
  });

  // An IPv6 address outside the prefixes that stand for IPv4 clients may still end in dotted form.
  it('reads a dotted tail as the last 32 bits of an IPv6 address', () => {
    expect(ipIdentity('2001:db8::1.2.3.4', false)).toBe('ip:2001:db8::102:304');
    expect(ipIdentity('2001:db8::1.2.3.4', false)).toBe(ipIdentity('2001:db8::0102:0304', false));
    expect(ipIdentity('2001:db8::1.2.3.4', 56)).toBe('ip:2001:db8::/56');
  });
});

describe('ipIdentity for anything else', () => {
  it.each([
    undefined,
    '',
    'unknown',
    'localhost',
    '1.2.3',
    '256.1.1.1',
    '1.2.3.4.5',
    '::ffff:999.1.1.1',
    '2001:db8::g',
    '1:2:3:4:5:6:7:8:9',
    '2001:db8::1::2',
  ])('returns undefined for %j', (ip) => {
    expect(ipIdentity(ip, 56)).toBeUndefined();
    expect(ipIdentity(ip, false)).toBeUndefined();
  });
});
