/**
 * Regression tests for "distinct clients share one bucket": IPv4 clients written as NAT64, SIIT or
 * IPv4-compatible IPv6, addresses with a port or brackets, and addresses that are not IPs at all.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  addressIdentity,
  ipIdentity,
  isUnparsedAddress,
  readClientAddress,
} from '../../../src/http/identity/client-ip.js';
import { byIp } from '../../../src/http/identity/request-keys.js';
import { fakeAccess } from '../fixtures.js';

describe('ipIdentity of IPv4 clients written as IPv6', () => {
  it.each([
    ['64:ff9b::192.0.2.1', 'NAT64 (RFC 6052), dotted'],
    ['64:ff9b::c000:201', 'NAT64, hex'],
    ['64:ff9b::c000:0201', 'NAT64, hex with leading zeros'],
    ['64:FF9B:0:0:0:0:C000:0201', 'NAT64, written out in upper case'],
    ['0064:ff9b:0000:0000:0000:0000:192.0.2.1', 'NAT64, every zero written'],
    ['::ffff:0:192.0.2.1', 'SIIT IPv4-translated'],
    ['::FFFF:0:C000:201', 'SIIT, hex in upper case'],
    ['0:0:0:0:ffff:0:c000:201', 'SIIT, written out'],
    ['::192.0.2.1', 'IPv4-compatible (deprecated)'],
    ['::c000:201', 'IPv4-compatible, hex'],
    ['0:0:0:0:0:0:192.0.2.1', 'IPv4-compatible, written out'],
    ['64:ff9b::192.0.2.1%eth0', 'NAT64 with a zone index'],
  ])('keys %s (%s) as the IPv4 client', (ip) => {
    for (const subnet of [56, 64, 128, false] as const) expect(ipIdentity(ip, subnet)).toBe('ip:192.0.2.1');
  });

  it('gives two clients behind one NAT64 gateway two buckets, not one /56', () => {
    expect(ipIdentity('64:ff9b::c000:201', 56)).not.toBe(ipIdentity('64:ff9b::c000:202', 56));
    expect(ipIdentity('64:ff9b::c000:202', 56)).toBe('ip:192.0.2.2');
  });

  it('keeps :: and ::1 as IPv6, not as the compatible 0.0.0.0 and 0.0.0.1, and apart from ::a.b.c.d', () => {
    expect(ipIdentity('::1', false)).toBe('ip:::1');
    expect(ipIdentity('::', false)).toBe('ip:::');
    expect(ipIdentity('::1', 56)).toBe('ip:::/56');
    expect(ipIdentity('::10.0.0.1', 56)).toBe('ip:10.0.0.1');
  });

  it('keys prefixes next to those as IPv6 subnets', () => {
    expect(ipIdentity('64:ff9b:1::c000:201', 56)).toBe('ip:64:ff9b:1::/56'); // RFC 8215 local use
    expect(ipIdentity('::1:0:c000:201', false)).toBe('ip:::1:0:c000:201');
    expect(ipIdentity('::fffe:c000:201', false)).toBe('ip:::fffe:c000:201');
  });
});

describe('ipIdentity of addresses as proxies forward them', () => {
  it.each([
    ['203.0.113.5:51234', 'ip:203.0.113.5'],
    ['203.0.113.5:0', 'ip:203.0.113.5'],
    ['203.0.113.5:65535', 'ip:203.0.113.5'],
    ['[2001:db8::1]', 'ip:2001:db8::1'],
    ['[2001:db8::1]:443', 'ip:2001:db8::1'],
    ['[2001:DB8::1]:443', 'ip:2001:db8::1'],
    ['[fe80::1%eth0]:443', 'ip:fe80::1'],
    ['[::ffff:203.0.113.5]:443', 'ip:203.0.113.5'],
    ['[64:ff9b::cb00:7105]:8080', 'ip:203.0.113.5'],
    [' 203.0.113.5 ', 'ip:203.0.113.5'],
    ['\t2001:db8::1 ', 'ip:2001:db8::1'],
    [' [2001:db8::1]:443 ', 'ip:2001:db8::1'],
  ])('reads %j as %s', (ip, identity) => {
    expect(ipIdentity(ip, false)).toBe(identity);
  });

  it('never takes the last group of a bare IPv6 address for a port', () => {
    expect(ipIdentity('2001:db8::1', false)).toBe('ip:2001:db8::1');
    expect(ipIdentity('2001:db8::443', false)).toBe('ip:2001:db8::443');
    expect(ipIdentity('1:2:3:4:5:6:7:8', false)).toBe('ip:1:2:3:4:5:6:7:8');
  });

  it.each([
    '203.0.113.5:',
    '203.0.113.5:65536',
    '203.0.113.5:123456',
    '203.0.113.5:http',
    '203.0.113.5:-1',
    '203.0.113.5:80:80',
    '203.0.113.5%eth0',
    '[203.0.113.5]',
    '[203.0.113.5]:80',
    '[2001:db8::1',
    '[2001:db8::1]:',
    '[2001:db8::1]443',
    '[2001:db8::1]:99999',
    '[]:80',
    '2001:db8::1:443]',
    '   ',
  ])('returns undefined for %j', (ip) => {
    expect(ipIdentity(ip, 56)).toBeUndefined();
    expect(readClientAddress(ip)).toBeUndefined();
  });
});

describe('addressIdentity', () => {
  it('is ipIdentity for an IP', () => {
    expect(addressIdentity('203.0.113.5:51234', 56)).toBe('ip:203.0.113.5');
    expect(addressIdentity('2001:db8:ab:cd12::1', 56)).toBe('ip:2001:db8:ab:cd00::/56');
    expect(addressIdentity('2001:db8::1', false)).toBe('ip:2001:db8::1');
  });

  it('gives a value that is not an IP a bucket of its own: ip-unparsed:sha256:<base64url>', () => {
    const digest = createHash('sha256').update('garbage-1').digest('base64url');
    expect(addressIdentity('garbage-1', 56)).toBe(`ip-unparsed:sha256:${digest}`);
    expect(addressIdentity('garbage-2', 56)).not.toBe(addressIdentity('garbage-1', 56));
    expect(addressIdentity('garbage-1', false)).toBe(addressIdentity('garbage-1', 56));
  });

  it('keeps the key short and plain whatever the value holds', () => {
    for (const raw of ['x'.repeat(10_000), 'a\r\nb', 'é\u0000\u{1f600}', '   ', 'unknown']) {
      expect(addressIdentity(raw, 56)).toMatch(/^ip-unparsed:sha256:[\w-]{43}$/);
    }
  });

  it.each([undefined, ''])('returns undefined for no address (%j)', (raw) => {
    expect(addressIdentity(raw, 56)).toBeUndefined();
  });

  it('tells its unparsed identities apart with isUnparsedAddress', () => {
    expect(isUnparsedAddress(addressIdentity('garbage', 56) as string)).toBe(true);
    expect(isUnparsedAddress(addressIdentity('10.0.0.1', 56) as string)).toBe(false);
    expect(isUnparsedAddress('user:ip-unparsed:x')).toBe(false);
  });
});

describe('byIp', () => {
  const key = byIp();

  it('keys each unparseable address on its own, never in one shared bucket', () => {
    const first = key({ ip: 'garbage-1' }, fakeAccess);
    const second = key({ ip: 'garbage-2' }, fakeAccess);
    expect(first).toMatch(/^ip-unparsed:sha256:/);
    expect(second).toMatch(/^ip-unparsed:sha256:/);
    expect(first).not.toBe(second);
  });

  it('drops the port a proxy forwarded, and keys NAT64 clients as IPv4', () => {
    expect(key({ ip: '203.0.113.5:51234' }, fakeAccess)).toBe(key({ ip: '203.0.113.5' }, fakeAccess));
    expect(key({ ip: '64:ff9b::c000:201' }, fakeAccess)).toBe('ip:192.0.2.1');
  });

  it('returns undefined when the framework gave no address', () => {
    expect(key({}, fakeAccess)).toBeUndefined();
    expect(key({ ip: '' }, fakeAccess)).toBeUndefined();
  });
});
