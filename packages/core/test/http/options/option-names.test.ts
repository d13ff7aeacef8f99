/** Names nobody declared, in options, in `warnings` and in policies: each throws, with a hint. */
import { describe, expect, it } from 'vitest';
import { OPTION_NAMES } from '../../../src/http/options/option-table.js';
import type { RateLimitOptions } from '../../../src/http/options/option-types.js';
import { PEER_OPTIONS } from '../../../src/http/options/peer-option-hints.js';
import { createHttpLimiter } from '../../../src/http/pipeline/http-limiter.js';
import { WARNING_CODES } from '../../../src/support/warnings.js';
import { type FakeRequest, fakeAccess, TEST_ADAPTER } from '../fixtures.js';

type Options = RateLimitOptions<FakeRequest>;

const BASE: Options = { limit: 10, window: '1m', name: 'options-test' };

const build = (options: Options) => createHttpLimiter(options, fakeAccess, TEST_ADAPTER);

describe('unknown options', () => {
  it.each([
    ['windowMs', "use window (ms or '15m')"],
    ['max', 'use limit'],
    ['keyGenerator', 'use key (see byIp, byApiKey, byUser)'],
    ['timeWindow', "use window (ms or '1m')"],
    ['standardHeaders', "use headers ('draft-11', 'draft-10', 'draft-7', 'draft-6' or false)"],
  ])('rejects %s with a hint: %s', (option, hint) => {
    const attempt = () => build({ ...BASE, [option]: 1 } as Options);
    expect(attempt).toThrow(TypeError);
    expect(attempt).toThrow(`@tollgate/test: unknown option '${option}'; ${hint}.`);
  });

  it.each([
    ['points', 'use limit'],
    ['duration', 'use window'],
    ['id', 'use key'],
    ['whitelist', 'use allowList'],
    ['onLimitReached', 'use onExceeded'],
    ['skipOnError', "use onStoreError: 'allow'"],
    ['passOnStoreError', "use onStoreError: 'allow'"],
    ['db', 'use store: new RedisStore({ client })'],
    ['throw', 'use throwOnLimit'],
    ['errorMessage', 'use message'],
    ['status', 'use statusCode'],
    ['namespace', 'use name'],
    ['timeoutMs', 'use timeout'],
    ['useRedisPackage', 'use store: new RedisStore({ client })'],
  ])("rejects the peers' %s with what to write instead", (option, hint) => {
    expect(() => build({ ...BASE, [option]: 1 } as Options)).toThrow(`unknown option '${option}'; ${hint}`);
  });

  // rate-limiter-flexible's fallback limiter and its in-memory block have equivalents here (the insurance
  // limiter and the deny cache): their hints used to say that Tollgate had none.
  it.each([
    ['insuranceLimiter', "use onStoreError: 'insurance' (the default"],
    ['inMemoryBlockOnConsumed', 'use denyCache (on by default'],
    ['rejectIfRedisNotReady', 'use onStoreError (RedisStore sends no check while its client is not ready'],
    ['blockDuration', 'use ban: { after, duration }'],
    ['onBanReach', 'use onExceeded'],
  ])("points the peers' %s at what Tollgate does instead", (option, hint) => {
    expect(() => build({ ...BASE, [option]: 1 } as Options)).toThrow(`unknown option '${option}'; ${hint}`);
  });

  it.each(['continueExceeding', 'exponentialBackoff'])(
    "takes @fastify/rate-limit's %s as a boolean, and says so for anything else",
    (option) => {
      expect(() => build({ ...BASE, [option]: true } as Options)).not.toThrow();
      expect(() => build({ ...BASE, [option]: 1 } as Options)).toThrow(
        `@tollgate/test: ${option} must be true or false; got 1`,
      );
    },
  );

  it.each([
    ['blacklist', 'koa-ratelimit'],
    ['inMemoryBlockDuration', 'rate-limiter-flexible'],
  ])("says plainly that the peers' %s is not supported", (option, peer) => {
    const attempt = () => build({ ...BASE, [option]: 1 } as Options);
    expect(attempt).toThrow(`@tollgate/test: unknown option '${option}' (from ${peer}): not supported; `);
    expect(attempt).not.toThrow(/ use |did you mean/);
  });

  it.each([
    ['limt', 'limit'],
    ['windwo', 'window'],
    ['Limit', 'limit'],
    ['failopen', 'failOpen'],
    ['legacyHeader', 'legacyHeaders'],
    ['throwOnLimits', 'throwOnLimit'],
    ['polices', 'policies'],
  ])('rejects the typo %s, asking whether %s was meant', (typo, meant) => {
    expect(() => build({ ...BASE, [typo]: 1 } as Options)).toThrow(
      new TypeError(`@tollgate/test: unknown option '${typo}'; did you mean ${meant}?`),
    );
  });

  // A peer's name that became an option of ours (statusCode, allowList, …) must leave the hints, or its
  // hint would describe an option that no longer needs one.
  it('lists no peer name that is an option of ours', () => {
    expect(OPTION_NAMES.filter((name) => PEER_OPTIONS.has(name))).toEqual([]);
  });

  it('rejects an option nobody knows, listing the known ones', () => {
    expect(() => build({ ...BASE, frobnicate: 5 } as Options)).toThrow(
      new TypeError(`@tollgate/test: unknown option 'frobnicate'. Known: ${OPTION_NAMES.join(', ')}`),
    );
  });

  it('rejects a name that only exists on Object.prototype', () => {
    expect(() => build({ ...BASE, constructor: 1 } as Options)).toThrow(/unknown option 'constructor'/);
  });

  it('rejects an unknown option even when its value is undefined', () => {
    expect(() => build({ ...BASE, max: undefined } as Options)).toThrow(/unknown option 'max'/);
  });
});

describe('warnings by code', () => {
  it('accepts every code there is', () => {
    const allOff = Object.fromEntries(WARNING_CODES.map((code) => [code, false]));
    expect(() => build({ ...BASE, warnings: allOff })).not.toThrow();
  });

  // A typo used to be accepted silently, leaving the warning it meant to switch off switched on.
  it('rejects an unknown code, asking whether the closest one was meant', () => {
    expect(() => build({ ...BASE, warnings: { TOLLGATE_MISING_IP: false } as never })).toThrow(
      new TypeError(
        "@tollgate/test: warnings has an unknown code 'TOLLGATE_MISING_IP'; did you mean TOLLGATE_MISSING_IP?",
      ),
    );
  });

  it('rejects a code nothing like a real one, listing the codes', () => {
    expect(() => build({ ...BASE, warnings: { proxy: false } as never })).toThrow(
      `@tollgate/test: warnings has an unknown code 'proxy'. Known: ${WARNING_CODES.join(', ')}`,
    );
  });
});

describe('policies', () => {
  // It used to be ignored: { algorithm: 'fixed-window' } quietly ran a token bucket.
  it('rejects a policy with an unknown algorithm, naming the adapter and the known ones', () => {
    expect(() => build({ policies: { limit: 10, window: '1m', algorithm: 'fixed' } as never })).toThrow(
      /^@tollgate\/test: policy.algorithm must be one of 'token-bucket', 'fixed-window', 'sliding-window'; got 'fixed'/,
    );
  });

  it('rejects an unknown field of the n-th policy, naming it', () => {
    const policies = [
      { limit: 1, window: '1s' },
      { limit: 10, windw: '1m' },
    ] as never;
    expect(() => build({ policies })).toThrow(
      "@tollgate/test: policies[1] has an unknown field 'windw'; did you mean window?",
    );
  });
});

describe('ban', () => {
  it.each([
    [3, /ban must be an object like \{ after: 5, duration: '15m' \}/], // @fastify/rate-limit's number
    [{ after: 0, duration: '1m' }, /ban.after must be a positive whole number/],
    [{ after: 2 }, /ban.duration must be/],
    [{ after: 2, duration: '1m', blockDuration: 5 }, /ban has an unknown field 'blockDuration'/],
  ])('rejects ban %j at construction', (ban, message) => {
    expect(() => build({ ...BASE, ban } as Options)).toThrow(message);
  });
});
