/**
 * What an adapter's middleware carries beside it for its operators: a client's buckets refilled, and its
 * limits overridden at runtime, in every process that shares the store.
 */
import type { LimitOverride, Override, OverrideOptions } from '../../limiter/overrides.js';
import { TollgateOptionError } from '../../support/option-error.js';

/** Per-key controls of an HTTP limiter; every adapter's middleware has them. */
export interface KeyControls {
  /**
   * Refills every bucket of `key` (an identity, as `info.key` shows it: `'ip:203.0.113.7'`) in this
   * limiter, its insurance limiter's too. Rejects when the store fails.
   */
  resetKey(key: string): Promise<void>;
  /**
   * Gives `key` other limits, in every process from its next check, shown in its headers: a number for
   * one policy, or limits by policy name; `ttl` ends it. Its buckets go on from where they are (a window
   * keeps its count, a token bucket its tokens). Needs the
   * `overrides: true` option and static policies (with a `limit` function, return the client's limit
   * from it). A bad override throws a `TypeError`; rejects when the store fails.
   *
   * @example
   * await limit.setOverride('ip:203.0.113.7', 1000, { ttl: '1h' });
   */
  setOverride(key: string, limits: LimitOverride, options?: OverrideOptions): Promise<void>;
  /** Gives `key` the policies' own limits again, in every process. */
  removeOverride(key: string): Promise<void>;
  /** `key`'s override in force; `undefined`: none. */
  getOverride(key: string): Promise<Override | undefined>;
}

/**
 * The {@link KeyControls} of `limiter`, on their own: what an adapter puts on its middleware.
 *
 * @example
 * return Object.assign(middleware, keyControls(limiter));
 */
export function keyControls({
  resetKey,
  setOverride,
  removeOverride,
  getOverride,
}: KeyControls): KeyControls {
  return { resetKey, setOverride, removeOverride, getOverride };
}

/**
 * The {@link KeyControls} of an adapter's several limiters (Fastify's plugin, NestJS's module: the
 * app-wide one and the routes'): `resetKey` reaches every one; an override is set in, or removed from,
 * every one made with `overrides: true`, and read from the first of them. `limiters` is read at each
 * call, so limiters made later are reached too.
 *
 * @example
 * fastify.decorate('rateLimit', Object.assign(decorator, groupKeyControls(() => ownLimiters, adapter)));
 */
export function groupKeyControls(
  limiters: () => readonly (KeyControls & { readonly overrides: boolean })[],
  adapter: string,
): KeyControls {
  const overriding = () => {
    const found = limiters().filter(({ overrides }) => overrides);
    if (found.length > 0) return found;
    throw new TollgateOptionError(
      `${adapter}: setOverride, removeOverride and getOverride need the overrides: true option`,
    );
  };
  return {
    async resetKey(key) {
      await Promise.all(limiters().map((limiter) => limiter.resetKey(key)));
    },
    async setOverride(key, limits, options) {
      await Promise.all(overriding().map((limiter) => limiter.setOverride(key, limits, options)));
    },
    async removeOverride(key) {
      await Promise.all(overriding().map((limiter) => limiter.removeOverride(key)));
    },
    getOverride: async (key) => (overriding()[0] as KeyControls).getOverride(key),
  };
}
