/**
 * One error family: every code the packages use is explained in docs/errors.md (and nothing there is
 * stale), every error they throw on purpose is a TollgateError with a code, and option errors still are
 * the TypeError or RangeError they were, their messages naming where they come from.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rateLimit as expressRateLimit } from '../../../express/src/index.js';
import { tollgate } from '../../../fastify/src/index.js';
import { rateLimit as fetchRateLimit } from '../../../fetch/src/index.js';
import { rateLimit as honoRateLimit } from '../../../hono/src/index.js';
import { rateLimit as koaRateLimit } from '../../../koa/src/index.js';
import { createHttpLimiter, handledError } from '../../src/adapter.js';
import {
  byApiKey,
  ClientAddressError,
  createConcurrencyLimiter,
  createLimiter,
  MemoryStore,
  parseDuration,
  RateLimitError,
  RedisStore,
  StoreUnavailableError,
  TollgateError,
  TollgateOptionError,
} from '../../src/index.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const errorsPage = readFileSync(join(root, 'docs/errors.md'), 'utf8');

/** Every `.ts` file under each package's `src`, as [path, text]. */
function packageSources(): [string, string][] {
  const sources: [string, string][] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts'))
        sources.push([path.slice(root.length), readFileSync(path, 'utf8')]);
    }
  };
  for (const name of readdirSync(join(root, 'packages'))) walk(join(root, 'packages', name, 'src'));
  return sources;
}

const sources = packageSources();

/** The entries of docs/errors.md: its `### TOLLGATE_…` headings. */
const documented = [...errorsPage.matchAll(/^### (TOLLGATE_[A-Z0-9_]+)$/gm)].map((match) => match[1]);

/** A synchronous throw (or a rejection) of `attempt`, as the value thrown. */
async function thrownBy(attempt: () => unknown): Promise<unknown> {
  try {
    await attempt();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('docs/errors.md', () => {
  it('explains every code the packages use, once each, and no other', () => {
    const used = new Set<string>();
    for (const [, text] of sources) {
      for (const match of text.matchAll(/'(TOLLGATE_[A-Z0-9_]+)'/g)) used.add(match[1] as string);
    }
    expect(used.size).toBeGreaterThan(20);
    expect(documented.length).toBe(new Set(documented).size);
    expect([...documented].sort()).toEqual([...used].sort());
  });

  it('has each entry say what it means and what to do', () => {
    const entries = errorsPage.split(/^### /m).slice(1);
    for (const wrapped of entries) {
      const entry = wrapped.replace(/\s+/g, ' ');
      expect(entry, entry.slice(0, 40)).toContain('**What it means.**');
      expect(entry, entry.slice(0, 40)).toContain('**What to do.**');
    }
  });
});

describe('what the packages throw', () => {
  it('is never a bare Error, TypeError or RangeError', () => {
    // `new Error()` with no message is how adapters read their own stack, never thrown.
    const bare = sources.flatMap(([path, text]) =>
      text
        .split('\n')
        .map((line, index) => ({ line, at: `${path}:${index + 1}` }))
        .filter(({ line }) => /new (?:Type|Range)?Error\((?!\))/.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    );
    const fix =
      'throw a member of the family: TollgateOptionError, TollgateArgumentError, TollgateRangeError (src/support/)';
    expect(bare, fix).toEqual([]);
  });

  it.each([
    [
      'createLimiter',
      () =>
        createLimiter({
          policies: [
            { limit: 1, window: '1s' },
            { limit: -1, window: '1m' },
          ],
        }),
    ],
    ['createLimiter', () => createLimiter({ policies: { limit: 1, window: '1s' }, namespace: 'a b' })],
    [
      'createLimiter',
      () => createLimiter({ policies: { limit: 1, window: '1s' }, timeout: '1 parsec' as never }),
    ],
    ['createConcurrencyLimiter', () => createConcurrencyLimiter({ limit: 0 })],
    [
      '@tollgate/test',
      () => createHttpLimiter({ limt: 5 } as never, {} as never, { adapter: '@tollgate/test' }),
    ],
    ['@tollgate/express', () => expressRateLimit({ window: 'soon' as never })],
    ['@tollgate/koa', () => koaRateLimit({ statusCode: 200 })],
    ['@tollgate/hono', () => honoRateLimit({ limit: 0.5 })],
    ['@tollgate/fetch', () => fetchRateLimit({ ip: () => '127.0.0.1', headers: 'draft-99' as never })],
    ['@tollgate/fastify', () => tollgate({} as never, { global: 'yes' as never })],
    ['MemoryStore', () => new MemoryStore({ maxKeys: -1 })],
    ['RedisStore', () => new RedisStore({ client: {} as never })],
    ['byApiKey', () => byApiKey({ header: '' } as never)],
    ['policy.window', () => parseDuration('1 fortnight' as never, 'policy.window')],
  ])('a bad option of %s is a TypeError and a TollgateError naming it', async (source, attempt) => {
    const error = await thrownBy(attempt);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).toBeInstanceOf(TollgateOptionError);
    expect(error).toBeInstanceOf(TollgateError);
    expect(error).toMatchObject({ name: 'TypeError', code: 'TOLLGATE_INVALID_OPTION' });
    expect((error as Error).message.startsWith(source)).toBe(true);
    expect((error as Error).stack).toMatch(/^TypeError \[TOLLGATE_INVALID_OPTION\]: /);
    expect((error as TollgateOptionError).help).toBe('docs/errors.md#tollgate_invalid_option');
    // Test runners compare errors by their own fields: the code is the prototype's, not the instance's.
    expect(Object.keys(error as object)).toEqual([]);
  });

  it('keeps a too-large burst × window a RangeError, with the same code', () => {
    const attempt = () => createLimiter({ policies: { limit: 2 ** 52, window: '365d' } });
    const error = (() => {
      try {
        attempt();
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(RangeError);
    expect(error).toBeInstanceOf(TollgateError);
    expect(error).toMatchObject({ name: 'RangeError', code: 'TOLLGATE_INVALID_OPTION' });
    expect((error as Error).message).toMatch(/^createLimiter: policy: burst × window is too large/);
  });

  it('rejects a bad call with TOLLGATE_INVALID_ARGUMENT, a TypeError', async () => {
    const limiter = createLimiter({ policies: { limit: 5, window: '1m' } });
    for (const call of [
      () => limiter.consume('user:1', { cost: 0 }),
      () => limiter.consume(''),
      () => limiter.consume('user:1', 'cheap' as never),
    ]) {
      const error = await thrownBy(call);
      expect(error).toBeInstanceOf(TypeError);
      expect(error).toBeInstanceOf(TollgateError);
      expect(error).toMatchObject({ code: 'TOLLGATE_INVALID_ARGUMENT' });
    }
  });

  it('makes the existing errors members, each with its code and help', () => {
    const decision = { allowed: false, reason: 'limited', retryAfterMs: 1000 } as never;
    const info = { limiter: 'site', decision } as never;
    const members: [TollgateError, string][] = [
      [new ClientAddressError('no address'), 'TOLLGATE_NO_CLIENT_ADDRESS'],
      [new RateLimitError({}, info), 'TOLLGATE_RATE_LIMITED'],
      [new StoreUnavailableError('down'), 'TOLLGATE_STORE_UNAVAILABLE'],
      [handledError({ kind: 'stopped' }, '@tollgate/test') as TollgateError, 'TOLLGATE_ALREADY_ANSWERED'],
    ];
    for (const [error, code] of members) {
      expect(error).toBeInstanceOf(TollgateError);
      expect(error.code).toBe(code);
      expect(error.help).toBe(`docs/errors.md#${code.toLowerCase()}`);
      expect(documented).toContain(code);
    }
    // A subclass is checked by its prototype, as usual.
    expect(new StoreUnavailableError('down')).not.toBeInstanceOf(ClientAddressError);
  });

  it('recognises a member from another copy of the package by its code, and nothing else', () => {
    const fromAnotherCopy = Object.assign(new TypeError('limit must be …'), {
      code: 'TOLLGATE_INVALID_OPTION',
    });
    expect(fromAnotherCopy).toBeInstanceOf(TollgateError);
    expect(Object.assign(new Error('no'), { code: 'ECONNREFUSED' })).not.toBeInstanceOf(TollgateError);
    expect({ code: 'TOLLGATE_INVALID_OPTION' }).not.toBeInstanceOf(TollgateError);
    expect(new TypeError('x')).not.toBeInstanceOf(TollgateError);
    expect(null).not.toBeInstanceOf(TollgateError);
  });
});
