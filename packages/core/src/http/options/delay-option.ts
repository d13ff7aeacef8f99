/** The `delay` option, checked: a request over the limit waits for its turn instead of a 429. */
import { DEFAULT_MAX_WAITERS, sleepOf } from '../../limiter/limiter-options.js';
import { MAX_WAIT_MS, type Sleep } from '../../limiter/waits.js';
import type { ResolvedPolicy } from '../../model/policy.js';
import { type Duration, parseDuration } from '../../support/duration.js';
import { TollgateOptionError } from '../../support/option-error.js';
import {
  isSettingsObject,
  ownOptions,
  positiveWholeNumber,
  rejectUnknownNames,
} from '../../support/value-checks.js';

/** `delay` as its check leaves it. */
export interface ResolvedDelay {
  /** The longest a request waits for its turn, in ms: above 0. */
  readonly maxWaitMs: number;
  /** The most requests of one core limiter that may wait at once, in this process. */
  readonly maxWaiters: number;
  readonly sleep: Sleep;
}

const DELAY_FIELDS: readonly string[] = ['maxWait', 'maxWaiters', 'sleep'];

/**
 * Checks `delay` on its own: `undefined` or `false` for none, else `{ maxWait, maxWaiters?, sleep? }`.
 * Throws a `TollgateOptionError` naming the field.
 *
 * @example
 * delaySettings({ maxWait: '2s' }, '@tollgate/express: delay'); // { maxWaitMs: 2000, maxWaiters: 1000, sleep }
 */
export function delaySettings(value: unknown, what: string): ResolvedDelay | undefined {
  if (value === undefined || value === false) return undefined;
  if (!isSettingsObject(value)) {
    throw new TollgateOptionError(`${what} must be an object like { maxWait: '2s' }, or false`);
  }
  rejectUnknownNames(value, DELAY_FIELDS, new Map(), `${what} has an unknown field`);
  const { maxWait, maxWaiters, sleep } = ownOptions(value);
  if (maxWait === undefined) {
    throw new TollgateOptionError(`${what}.maxWait is missing: the longest a request waits for its turn`);
  }
  const maxWaitMs = parseDuration(maxWait as Duration, `${what}.maxWait`);
  if (maxWaitMs > MAX_WAIT_MS) {
    throw new TollgateOptionError(
      `${what}.maxWait must be at most ${MAX_WAIT_MS} ms (about 24.8 days); got ${maxWaitMs}`,
    );
  }
  if (sleep !== undefined && typeof sleep !== 'function') {
    throw new TollgateOptionError(`${what}.sleep must be a function (ms, signal) => Promise<void>`);
  }
  return Object.freeze({
    maxWaitMs,
    maxWaiters:
      maxWaiters === undefined ? DEFAULT_MAX_WAITERS : positiveWholeNumber(maxWaiters, `${what}.maxWaiters`),
    sleep: sleepOf(sleep, `${what}.sleep`),
  });
}

/**
 * Why a limiter with `delay` cannot be built from these options, or `undefined` when it can. A wait is
 * a turn the store hands out by charging a token bucket into debt, which a window cannot owe and a
 * process's token slice does not ask the store for; a metered cost is reserved, which does not wait;
 * a dry run must not hold a request.
 */
export function whyDelayCannotWait(options: {
  readonly policies: readonly ResolvedPolicy[] | undefined;
  readonly algorithm: string | undefined;
  readonly metered: boolean;
  readonly dryRun: unknown;
}): string | undefined {
  const { policies, algorithm, metered, dryRun } = options;
  const windowed = policies?.find((p) => p.algorithm !== 'token-bucket' || p.slice !== undefined);
  if (windowed !== undefined || (algorithm !== undefined && algorithm !== 'token-bucket')) {
    const what =
      windowed === undefined
        ? `algorithm is '${algorithm}'`
        : windowed.slice !== undefined
          ? `policy '${windowed.name}' has token slices`
          : `policy '${windowed.name}' is a ${windowed.algorithm}`;
    return (
      `delay needs token-bucket policies, and ${what}: a waiting request is given a turn by charging ` +
      "its bucket into debt, which only a token bucket can owe. Use algorithm: 'token-bucket' (the default)"
    );
  }
  if (metered) {
    return 'delay cannot be combined with a metered cost ({ reserve, settle }): a reservation does not wait for a turn';
  }
  if (dryRun !== false) {
    return 'delay cannot be combined with dryRun: a dry run must not hold requests, and one that does not hold them is not charged as delay charges them';
  }
  return undefined;
}
