/**
 * Differential test of client-IP parsing against ipaddr.js: many addresses of every form and spelling,
 * from a seeded generator, must get the identity that ipaddr.js's own reading of them implies.
 */
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { addressIdentity, ipIdentity } from '../../../src/http/identity/client-ip.js';
import { seeded } from '../../seeded.js';

type Random = () => number;
const below = (random: Random, n: number) => Math.floor(random() * n);
const pick = <T>(random: Random, items: readonly T[]): T => items[below(random, items.length)] as T;

/** A 16-bit group, often zero (so that zero runs, and their compression, are common). */
function group(random: Random): number {
  const roll = random();
  return roll < 0.4 ? 0 : roll < 0.5 ? below(random, 16) : roll < 0.6 ? 0xffff : below(random, 0x10000);
}

/** One 16-bit group as text: with or without leading zeros, in lower, upper or mixed case. */
function spellGroup(random: Random, value: number): string {
  const hex = random() < 0.3 ? value.toString(16).padStart(4, '0') : value.toString(16);
  const style = below(random, 3);
  if (style === 0) return hex;
  if (style === 1) return hex.toUpperCase();
  return [...hex].map((c) => (random() < 0.5 ? c.toUpperCase() : c)).join('');
}

/** Eight groups as any valid IPv6 text: written out or with any zero run as `::`, maybe a dotted tail. */
function spellIPv6(random: Random, groups: readonly number[]): string {
  const dotted = random() < 0.35;
  const hexCount = dotted ? 6 : 8;
  const parts = groups.slice(0, hexCount).map((value) => spellGroup(random, value));
  if (dotted) {
    const [g, h] = [groups[6] as number, groups[7] as number];
    parts.push(`${g >> 8}.${g & 0xff}.${h >> 8}.${h & 0xff}`);
  }
  // Every run of zero groups may be the one compressed, not only the longest: all are valid input.
  const runs: [number, number][] = [];
  for (let i = 0; i < hexCount; i++) {
    if (groups[i] !== 0) continue;
    let j = i;
    while (j < hexCount && groups[j] === 0) j++;
    for (let end = i + 1; end <= j; end++) runs.push([i, end]);
  }
  if (runs.length === 0 || random() < 0.25) return parts.join(':');
  const [start, end] = pick(random, runs);
  return `${parts.slice(0, start).join(':')}::${parts.slice(end).join(':')}`;
}

/** The IPv6 prefixes (first six groups) under which the last 32 bits are an IPv4 client. */
const EMBEDDING_PREFIXES = [
  [0, 0, 0, 0, 0, 0xffff], // mapped
  [0, 0, 0, 0, 0xffff, 0], // SIIT
  [0x64, 0xff9b, 0, 0, 0, 0], // NAT64
  [0, 0, 0, 0, 0, 0], // compatible
];

/** An IPv6 address of some kind: global, link-local, loopback, or one embedding an IPv4 address. */
function ipv6Groups(random: Random): number[] {
  const kind = below(random, 6);
  const tail = () => [below(random, 0x10000), below(random, 0x10000)];
  if (kind <= 1) return [...pick(random, EMBEDDING_PREFIXES), ...tail()];
  if (kind === 2)
    return pick(random, [
      [0, 0, 0, 0, 0, 0, 0, 1],
      [0, 0, 0, 0, 0, 0, 0, 0],
      [0xfe80, 0, 0, 0, ...tail(), ...tail()],
    ]);
  if (kind === 3) return [0x64, 0xff9b, below(random, 2), 0, 0, 0, ...tail()]; // and its neighbours
  return [0x2000 + below(random, 0x2000), ...Array.from({ length: 7 }, () => group(random))];
}

function ipv4Text(random: Random): string {
  return Array.from({ length: 4 }, () => pick(random, [0, 1, 127, 255, below(random, 256)])).join('.');
}

/** An address with what proxies and sockets put around it; `core` is what ipaddr.js is given. */
function forwardedForm(random: Random): { raw: string; core: string } {
  const space = () => pick(random, ['', '', '', ' ', '\t']);
  const port = () => `:${pick(random, [0, 80, 443, 51234, 65535, below(random, 65536)])}`;
  if (random() < 0.3) {
    const core = ipv4Text(random);
    return { raw: `${space()}${core}${random() < 0.4 ? port() : ''}${space()}`, core };
  }
  const zone = random() < 0.2 ? pick(random, ['%eth0', '%2', '%en0']) : '';
  const core = `${spellIPv6(random, ipv6Groups(random))}${zone}`;
  const wrapped = random() < 0.4 ? `[${core}]${random() < 0.6 ? port() : ''}` : core;
  return { raw: `${space()}${wrapped}${space()}`, core };
}

/** What the identity must be, by ipaddr.js's reading of the bare address. */
function expectedIdentity(core: string, subnet: number | false): string {
  // ipaddr.js reads `::a.b.c.d` as the mapped `::ffff:a.b.c.d`; RFC 4291 (2.2, form 3) makes it
  // `0:0:0:0:0:0:a.b.c.d`, so that `::0.0.0.1` is `::1`. It is given the written-out form.
  const address = ipaddr.parse(core.replace(/^::(?=\d+\.\d+\.\d+\.\d+(%|$))/, '0:0:0:0:0:0:'));
  if (address.kind() === 'ipv4') return `ip:${address.toString()}`;
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return `ip:${v6.toIPv4Address().toString()}`;
  const embedsIPv4 = [
    ipaddr.parseCIDR('::ffff:0:0:0/96'),
    ipaddr.parseCIDR('64:ff9b::/96'),
    ipaddr.parseCIDR('::/96'),
  ].some((range) => v6.match(range));
  if (embedsIPv4 && v6.range() !== 'unspecified' && v6.range() !== 'loopback') {
    return `ip:${new ipaddr.IPv4(v6.toByteArray().slice(12)).toString()}`;
  }
  const plain = new ipaddr.IPv6(v6.parts).toRFC5952String(); // without the zone
  if (subnet === false || subnet === 128) return `ip:${plain}`;
  return `ip:${ipaddr.IPv6.networkAddressFromCIDR(`${plain}/${subnet}`).toRFC5952String()}/${subnet}`;
}

/** The forms an input shows, to check that the generator makes each of them. */
function formsOf(raw: string, core: string, identity: string) {
  const v6 = core.includes(':');
  const lower = core.toLowerCase();
  return {
    ipv4: !v6,
    ipv4WithPort: !v6 && raw.includes(':'),
    ipv6Subnet: identity.endsWith('/56'),
    ipv6Dotted: v6 && core.includes('.'),
    ipv6UpperCase: lower !== core,
    bracketed: raw.includes('['),
    bracketedWithPort: raw.includes(']:'),
    zone: core.includes('%'),
    spaces: raw !== raw.trim(),
    embeddedIPv4: v6 && identity.includes('.'),
    nat64: lower.startsWith('64:ff9b::') && identity.includes('.'),
    loopback: identity === 'ip:::1',
  };
}

const SEEDS = [1, 2, 3, 0xdecaf, 20_240_601];
const PER_SEED = 1_500;

describe('client-IP parsing agrees with ipaddr.js', () => {
  it.each(SEEDS)('on addresses of every form, seed %i', (seed) => {
    const random = seeded(seed);
    const seen = new Set<string>();
    // Each mismatch names its input, so a failure says what to replay; one expect for them all.
    const mismatches: unknown[] = [];
    for (let i = 0; i < PER_SEED; i++) {
      const { raw, core } = forwardedForm(random);
      const subnet = pick(random, [false, 1, 36, 48, 56, 64, 100, 127, 128] as const);
      const expected = expectedIdentity(core, subnet);
      const identity = ipIdentity(raw, subnet);
      const address = addressIdentity(raw, subnet);
      if (identity !== expected || address !== expected)
        mismatches.push({ raw, subnet, identity, address, expected });
      for (const [form, present] of Object.entries(formsOf(raw, core, expected))) if (present) seen.add(form);
    }
    expect(mismatches).toEqual([]);
    // The generator itself is checked: every form it is meant to make, it made.
    expect([...seen].sort()).toEqual(Object.keys(formsOf('', '', '')).sort());
  });

  it.each(SEEDS)('on broken addresses, which both refuse, seed %i', (seed) => {
    const random = seeded(seed);
    const breakers: ((text: string) => string)[] = [
      (text) => `${text}:1:2:3:4:5:6:7:8`, // too many groups
      (text) => `${text}::1`,
      (text) => text.replace(/[\da-f]+$/i, '1ffff'), // a five-digit group
      (text) => text.replace(/[\da-f]+$/i, 'g'),
      (text) => `:${text.replace(/^::/, '1::')}`,
    ];
    const accepted: string[] = [];
    for (let i = 0; i < PER_SEED / 4; i++) {
      const text = spellIPv6(random, ipv6Groups(random)).replace(/\d+\.\d+\.\d+\.\d+$/, '1:2');
      const broken = pick(random, breakers)(text);
      if (ipaddr.IPv6.isValid(broken)) continue; // the breaker happened to make a valid address
      if (ipIdentity(broken, 56) !== undefined) accepted.push(broken);
    }
    for (let i = 0; i < PER_SEED / 4; i++) {
      const octets = ipv4Text(random).split('.');
      octets[below(random, 4)] = String(256 + below(random, 1000));
      const broken = octets.join('.');
      if (ipaddr.IPv4.isValidFourPartDecimal(broken)) throw new Error(`the breaker made a valid ${broken}`);
      if (ipIdentity(broken, 56) !== undefined) accepted.push(broken);
    }
    expect(accepted).toEqual([]);
  });
});
