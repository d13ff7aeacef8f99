/**
 * Regression tests for "allowList entries that do not mean what they look like": CIDR ranges match,
 * entries that look like addresses and are not one are refused, and an unreadable client IP is never
 * allow-listed by address.
 */
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { allowListOption, compileAllowList } from '../../../src/http/identity/allow-list.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { type FakeRequest, fakeAccess, storeOnClock, TEST_ADAPTER } from '../fixtures.js';

/** Whether a client with this IP, limited under `key`, is allow-listed by `list`. */
function listed(list: readonly string[], ip: string | undefined, key = 'ip:unrelated'): boolean {
  const allowListed = compileAllowList<FakeRequest>(list, fakeAccess);
  return allowListed?.(ip === undefined ? {} : { ip }, key) === true;
}

describe('allowList CIDR ranges', () => {
  it.each([
    ['10.0.0.0/8', ['10.0.0.0', '10.1.2.3', '10.255.255.255'], ['11.0.0.0', '9.255.255.255']],
    ['203.0.113.0/24', ['203.0.113.9', '203.0.113.255'], ['203.0.114.1', '198.51.100.1']],
    ['192.0.2.128/25', ['192.0.2.128', '192.0.2.200'], ['192.0.2.127']],
    ['10.0.0.1/32', ['10.0.0.1'], ['10.0.0.2']],
    ['0.0.0.0/0', ['1.2.3.4', '255.255.255.255'], ['2001:db8::1']],
    ['2001:db8::/32', ['2001:db8::1', '2001:db8:ffff::1'], ['2001:db9::1', '10.0.0.1']],
    ['2001:db8:ab:cd00::/56', ['2001:db8:ab:cdff::1'], ['2001:db8:ab:ce00::1']],
    ['2001:db8::/127', ['2001:db8::', '2001:db8::1'], ['2001:db8::2']],
    ['fe80::/10', ['fe80::1', 'febf::1'], ['fec0::1']],
    ['::1/128', ['::1'], ['::2', '0.0.0.1']],
  ])('%s lists the clients inside it, and only those', (entry, inside, outside) => {
    for (const ip of inside) expect({ ip, listed: listed([entry], ip) }).toEqual({ ip, listed: true });
    for (const ip of outside) expect({ ip, listed: listed([entry], ip) }).toEqual({ ip, listed: false });
  });

  it('ignores host bits, as 10.1.2.3/8 is written for 10.0.0.0/8', () => {
    expect(listed(['10.1.2.3/8'], '10.200.0.1')).toBe(true);
    expect(listed(['2001:db8::1/32'], '2001:db8:1::1')).toBe(true);
  });

  it('matches an IPv4 client written as IPv6 (mapped, NAT64, SIIT) against IPv4 ranges', () => {
    for (const ip of ['::ffff:10.1.2.3', '64:ff9b::a01:203', '::ffff:0:10.1.2.3', '[::ffff:10.1.2.3]:443']) {
      expect({ ip, listed: listed(['10.0.0.0/8'], ip) }).toEqual({ ip, listed: true });
    }
    expect(listed(['10.0.0.0/8'], '64:ff9b::b01:203')).toBe(false); // 11.1.2.3
  });

  it('reads a range in the IPv6 forms of IPv4 as the IPv4 range it embeds', () => {
    for (const entry of ['::ffff:10.0.0.0/104', '::ffff:a00:0/104', '64:ff9b::10.0.0.0/104']) {
      expect({ entry, listed: listed([entry], '10.9.9.9') }).toEqual({ entry, listed: true });
      expect({ entry, listed: listed([entry], '::ffff:10.9.9.9') }).toEqual({ entry, listed: true });
      expect({ entry, listed: listed([entry], '11.0.0.1') }).toEqual({ entry, listed: false });
    }
    expect(listed(['::ffff:10.0.0.1'], '10.0.0.1')).toBe(true);
    expect(listed(['64:ff9b::a00:1'], '10.0.0.1')).toBe(true);
  });

  it('reads the client IP as proxies forward it: a port or brackets do not hide it', () => {
    expect(listed(['203.0.113.0/24'], '203.0.113.9:51234')).toBe(true);
    expect(listed(['2001:db8::/32'], '[2001:db8::1]:443')).toBe(true);
  });

  it('still matches plain IPs exactly, in any spelling, and identities as identities', () => {
    expect(listed(['2001:DB8::1'], '2001:db8:0:0:0:0:0:1')).toBe(true);
    expect(listed(['2001:db8::1'], '2001:db8::2')).toBe(false);
    expect(listed(['user:admin', 'key:sha256:abc'], '198.51.100.1', 'user:admin')).toBe(true);
    expect(listed(['user:admin', 'key:sha256:abc'], '198.51.100.1', 'key:sha256:abc')).toBe(true);
    expect(listed(['ip:10.0.0.1'], '198.51.100.1', 'ip:10.0.0.1')).toBe(true);
  });

  it('agrees with ipaddr.js on ranges and addresses from a seeded generator', () => {
    let state = 42;
    const next = () => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return state;
    };
    // Each mismatch names its input; one expect for them all keeps the loop cheap.
    const mismatches: unknown[] = [];
    for (let i = 0; i < 2_000; i++) {
      const range = `${next() >>> 24}.${next() >>> 24}.${next() >>> 24}.${next() >>> 24}/${next() % 33}`;
      const base = ipaddr.parseCIDR(range)[0].toByteArray();
      const bytes = base.map((byte) => (next() % 4 === 0 ? next() >>> 24 : byte)); // near the range, often in
      const ip = bytes.join('.');
      const inIt = ipaddr.parse(ip).match(ipaddr.parseCIDR(range));
      if (listed([range], ip) !== inIt) mismatches.push({ range, ip, inIt });
      const mapped = `::ffff:${ip}`;
      if (listed([range], mapped) !== inIt) mismatches.push({ range, mapped, inIt });
    }
    expect(mismatches).toEqual([]);
  });
});

describe('allowList: a client IP that cannot be read', () => {
  // '10.0.0.1%eth0' used to compile to `undefined` in the IP set, and so to list every client whose IP
  // could not be parsed: the entry is refused now, and an unreadable IP is never listed by address.
  it.each([undefined, '', 'unknown', 'garbage-1', '10.0.0.256'])('is never listed by address: %j', (ip) => {
    expect(listed(['10.0.0.1', '0.0.0.0/0', '::1', '2001:db8::/32'], ip)).toBe(false);
  });
});

describe('allowList entries that look like an address but are not one', () => {
  it.each([
    ['10.0.0.256', /"10\.0\.0\.256" looks like an IP or CIDR range but is not one; write an IP/],
    ['10.0.0.0/33', /"10\.0\.0\.0\/33" .*an IPv4 prefix length is 0 to 32/],
    ['::1/129', /"::1\/129" .*an IPv6 prefix length is 0 to 128/],
    [
      '10.0.0.1%eth0',
      /"10\.0\.0\.1%eth0" .*a zone index \(%…\) names an interface of this host, not a client: drop it/,
    ],
    ['fe80::1%eth0', /"fe80::1%eth0" .*drop it/],
    ['fe80::/10%eth0', /"fe80::\/10%eth0" .*drop it/],
    ['1.2.3.4/', /"1\.2\.3\.4\/" looks like an IP or CIDR range/],
    ['10.0.0.0/8 ', /"10\.0\.0\.0\/8 " looks like an IP or CIDR range/],
    [' 10.0.0.1', /" 10\.0\.0\.1" looks like an IP or CIDR range/],
    ['10.0.0.0/08', /"10\.0\.0\.0\/08" looks like/],
    ['10.0.0.0/8/8', /looks like an IP or CIDR range/],
    ['10.0.0.0/-1', /looks like an IP or CIDR range/],
    ['010.0.0.1', /looks like an IP or CIDR range/],
    ['10.0.0', /looks like an IP or CIDR range/],
    ['10.0.0.1:8080', /looks like an IP or CIDR range.*no spaces, brackets or port/],
    ['[2001:db8::1]', /looks like an IP or CIDR range.*no spaces, brackets or port/],
    ['[2001:db8::1]:443', /looks like an IP or CIDR range/],
    ['2001:db8:::1', /looks like an IP or CIDR range/],
    ['::/0', /holds IPv6 forms of IPv4 addresses .*list IPv4 ranges for them/],
    ['64:ff9b::/64', /holds IPv6 forms of IPv4 addresses/],
    ['::ffff:0:0/95', /holds IPv6 forms of IPv4 addresses/],
  ])('refuses %j at construction', (entry, message) => {
    expect(() => allowListOption([entry], '@tollgate/test: allowList')).toThrow(TypeError);
    expect(() => allowListOption([entry], '@tollgate/test: allowList')).toThrow(message);
  });

  it('refuses them when a limiter is made, naming the option', () => {
    const { store } = storeOnClock();
    const make = () =>
      createHttpLimiter<FakeRequest>(
        { limit: 1, window: '1h', store, allowList: ['user:admin', '10.0.0.0/33'] },
        fakeAccess,
        TEST_ADAPTER,
      );
    expect(make).toThrow(/^@tollgate\/test: allowList: "10\.0\.0\.0\/33" looks like an IP or CIDR range/);
  });

  it.each([
    'user:admin',
    'key:sha256:n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg',
    'ip:10.0.0.1',
    'ip-unparsed:sha256:abc',
    'tenant:acme',
    '12345',
    'admin',
    '2001:db8::/32', // an address, accepted
    '64:ff9b:1::/48', // the RFC 8215 local-use NAT64 prefix holds no IPv4 client of those forms
    '::ffff:0:0/96', // every IPv4 client, written as mapped
    '2001:db8::g', // by the rule an identity: 'g' is no hex digit, so the entry does not look like an address
  ])('accepts %j', (entry) => {
    expect(allowListOption([entry], '@tollgate/test: allowList')).toEqual([entry]);
  });
});
