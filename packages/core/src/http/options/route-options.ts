/** Per-route options in frameworks that have them (Fastify): merged over the app's, checked early. */

import { TollgateOptionError } from '../../support/option-error.js';
import { describeValue, isSettingsObject, ownOptions } from '../../support/value-checks.js';
import type { AdapterSettings, RateLimitOptions } from './option-types.js';
import { resolveRateLimitOptions } from './options.js';

/**
 * Checks options that routes inherit without a limiter of their own (Fastify `global: false`), so
 * mistakes surface at registration rather than when the first route uses them. Whatever part of the
 * policy the routes bring is left to the defaults here.
 */
export function validateInheritedOptions<Req, Res>(
  options: RateLimitOptions<Req, Res>,
  settings: AdapterSettings,
): void {
  // A name of its own, so that checking uses up none of the default names that limiters are given in turn.
  resolveRateLimitOptions(isSettingsObject(options) ? { name: 'validation', ...options } : options, settings);
}

/** The options that make a policy without `policies`. */
const FLAT_POLICY = ['limit', 'window', 'burst', 'algorithm', 'nearLimit'];

/**
 * Per-route options over the app's: the route's values win and the rest is inherited, except that
 * - `name` is never inherited (a route gets its own buckets unless it names shared ones);
 * - a route's `policies` replace the app's `limit`/`window`/`burst`/`algorithm`/`nearLimit`, and a
 *   route's `limit`/`window`/`burst`/`algorithm`/`nearLimit` replace the app's `policies`; a route's `limit` drops the app's `burst`, which was sized for the app's limit.
 * `false` turns limiting off for the route. Any other override that is not an object of options (a
 * function, an array, `true`, a string, `null`) throws a `TypeError` that starts with `where`.
 *
 * @example
 * mergeRateLimitOptions({ store, limit: 100, window: '1m' }, { limit: 10 }); // 10 per minute, same store
 * mergeRateLimitOptions(base, route.config.rateLimit, '@tollgate/fastify (route GET /x): config.rateLimit');
 */
export function mergeRateLimitOptions<O extends RateLimitOptions<never, never>>(
  base: Partial<O>,
  override: Partial<O> | false | undefined,
  where = 'route options',
): Partial<O> | false {
  if (override === false) return false;
  const { name: _notInherited, ...inherited } = base;
  if (override === undefined) return ownOptions(inherited) as Partial<O>;
  if (!isSettingsObject(override)) {
    throw new TollgateOptionError(
      `${where} must be options like { limit: 10, window: '1s' }, or false; got ${describeValue(override)}`,
    );
  }
  // What the route set is what it holds itself: `in` would find a `limit` on `Object.prototype` too.
  const sets = (option: string) => Object.hasOwn(override, option);
  const dropped = new Set<string>();
  if (sets('policies')) for (const option of FLAT_POLICY) dropped.add(option);
  if (FLAT_POLICY.some(sets)) dropped.add('policies');
  if (sets('limit')) dropped.add('burst');
  const kept = Object.entries(inherited).filter(([option]) => !dropped.has(option));
  // Spreads copy own fields only; the copy without a prototype keeps the adapter's reads of the merge
  // (Fastify's `hook`, `handler`) from finding what the route did not set on `Object.prototype`.
  return ownOptions({ ...Object.fromEntries(kept), ...override }) as Partial<O>;
}
