import { describe, expect, it } from 'vitest';
import { closestName, rejectUnknownNames, unknownNameHint } from '../../src/support/value-checks.js';

const KNOWN = ['limit', 'window', 'burst', 'key', 'failOpen', 'legacyHeaders'];

describe('closestName', () => {
  it.each([
    ['limt', 'limit'],
    ['lmiit', 'limit'],
    ['windwo', 'window'],
    ['widnow', 'window'],
    ['kye', 'key'],
    ['FAILOPEN', 'failOpen'],
    ['legacyHeader', 'legacyHeaders'],
  ])('takes %s for %s', (typo, meant) => {
    expect(closestName(typo, KNOWN)).toBe(meant);
  });

  it.each(['x', 'frobnicate', 'store', 'cost', 'headers'])('finds nothing close to %s', (name) => {
    expect(closestName(name, KNOWN)).toBeUndefined();
  });
});

describe('unknownNameHint', () => {
  const peers = new Map([
    ['max', { use: 'limit' }],
    ['ban', { from: '@fastify/rate-limit', unsupported: 'no bans' }],
    ['blocked', { unsupported: 'no blocks' }],
  ]);

  it("prefers a peer's meaning to a spelling that happens to be close", () => {
    expect(unknownNameHint('max', ['limit', 'max_'], peers)).toBe('; use limit.');
  });

  it('says plainly what is not supported, and where the name comes from when known', () => {
    expect(unknownNameHint('ban', KNOWN, peers)).toBe(' (from @fastify/rate-limit): not supported; no bans.');
    expect(unknownNameHint('blocked', KNOWN, peers)).toBe(': not supported; no blocks.');
  });

  it('lists the known names when nothing fits', () => {
    expect(unknownNameHint('zzz', ['a', 'b'], peers)).toBe('. Known: a, b');
  });
});

describe('rejectUnknownNames', () => {
  it('accepts own keys that are all known, even when undefined', () => {
    expect(() => rejectUnknownNames({ limit: undefined }, KNOWN, new Map(), 'unknown option')).not.toThrow();
  });

  it('throws a TypeError for the first unknown key', () => {
    expect(() => rejectUnknownNames({ limit: 1, limt: 2 }, KNOWN, new Map(), 'x: unknown option')).toThrow(
      new TypeError("x: unknown option 'limt'; did you mean limit?"),
    );
  });
});
