/** Bounded waits: checking a call's `maxWait` and `signal`, counting waiters, and sleeping until a turn. */
import type { ResolvedPolicy } from '../model/policy.js';
import { TollgateArgumentError } from '../support/argument-error.js';
import { type Duration, parseDuration } from '../support/duration.js';

/**
 * The longest `maxWait`, in ms: the longest delay a Node.js timer keeps (about 24.8 days); a longer one
 * would fire at once.
 */
export const MAX_WAIT_MS = 2_147_483_647;

/** The default `maxWait` of `limiter.schedule`. */
export const DEFAULT_SCHEDULE_WAIT = '30s';

/**
 * A call's `maxWait`, checked, in ms: `0` (or absent) for none. A bad one throws a
 * `TollgateArgumentError` (a call option, not a limiter's).
 *
 * @example
 * maxWaitMsOf('5s'); // 5000
 */
export function maxWaitMsOf(maxWait: unknown): number {
  if (maxWait === undefined || maxWait === 0) return 0;
  let ms: number;
  try {
    ms = parseDuration(maxWait as Duration, 'maxWait');
  } catch (error) {
    throw new TollgateArgumentError(error instanceof Error ? error.message : String(error));
  }
  if (ms > MAX_WAIT_MS) {
    throw new TollgateArgumentError(`maxWait must be at most ${MAX_WAIT_MS} ms (about 24.8 days); got ${ms}`);
  }
  return ms;
}

/** A call's `signal`, checked: an `AbortSignal` or `undefined`. */
export function signalOf(signal: unknown): AbortSignal | undefined {
  if (signal === undefined || signal instanceof AbortSignal) return signal;
  throw new TollgateArgumentError(`signal must be an AbortSignal; got ${String(signal)}`);
}

/**
 * Why a limiter with these policies cannot wait, or `undefined` when it can: a wait charges into debt,
 * which only a token bucket can owe; a sliced policy admits in process, where no turn is handed out.
 */
export function whyNoWait(policies: readonly ResolvedPolicy[]): string | undefined {
  const cannot = policies.find((p) => p.algorithm !== 'token-bucket' || p.slice !== undefined);
  if (cannot === undefined) return undefined;
  const what = cannot.slice !== undefined ? 'has token slices' : `is a ${cannot.algorithm}`;
  return (
    `maxWait needs token-bucket policies without slices: policy '${cannot.name}' ${what}. ` +
    "Use { algorithm: 'token-bucket' } (the default) for a limiter that callers wait on"
  );
}

/** How many calls of a limiter are waiting for their turn, up to a cap. */
export class Waiters {
  #count = 0;
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** The calls waiting now. */
  get count(): number {
    return this.#count;
  }

  /** Counts one more waiter; `false` (and not counted) when `max` are waiting already. */
  enter(): boolean {
    if (this.#count >= this.#max) return false;
    this.#count++;
    return true;
  }

  /** Counts one waiter less. */
  leave(): void {
    this.#count--;
  }
}

/**
 * How a call given `maxWait` sleeps until its turn: resolves after `ms`. It may resolve early once
 * `signal` aborts (the limiter rejects the call then, whatever the sleep does).
 *
 * @example
 * const sleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The default {@link Sleep}: a timer, cleared when the signal aborts, so an aborted wait keeps nothing alive. */
export const timerSleep: Sleep = (ms, signal) =>
  new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/** Resolves once `sleep(ms)` has, or rejects with `signal`'s reason as soon as it aborts. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined, sleep: Sleep): Promise<void> {
  if (signal === undefined) return sleep(ms);
  return new Promise((resolve, reject) => {
    const aborted = () => reject(signal.reason);
    if (signal.aborted) {
      aborted();
      return;
    }
    signal.addEventListener('abort', aborted, { once: true });
    sleep(ms, signal).then(() => {
      signal.removeEventListener('abort', aborted);
      if (signal.aborted) aborted();
      else resolve();
    }, reject);
  });
}
