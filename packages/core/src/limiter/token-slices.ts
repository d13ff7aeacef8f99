/**
 * Token slices: per process and per key, tokens taken from the store in one call and spent in process,
 * so that a key every process checks (a tenant-wide quota) costs one round trip per slice, not per check;
 * and the checks of a limiter whose policy has slices, answered from this process's slice when it holds
 * the cost, else by taking a new slice, else (near the limit) by the store at the exact cost.
 *
 * Why the bound holds: every token spent here was charged to the store first, by an ordinary, atomic
 * consume of the whole slice. Within a window, a process can admit beyond what the store counted only
 * with tokens it took in an earlier window (spent, or given back into this one): its one slice per key,
 * of which the check that took it spent at least one. So any window admits at most
 * `processes × (size − 1)` more than the store alone would, and, while every process keeps asking, at
 * most as many fewer (the tokens parked in slices). A leftover is given back before the next slice is
 * asked for, on the same client, so the store applies the two in that order.
 */
import { decide } from '../algorithms/decide.js';
import { ALGORITHMS } from '../algorithms/registry.js';
import type { LimiterEvents } from '../diagnostics/publish.js';
import type { Decision } from '../model/decision.js';
import type { ResolvedPolicy, ResolvedTokenSlice } from '../model/policy.js';
import type { BucketMode, BucketRequest, BucketResult } from '../model/store.js';
import { StoreUnavailableError } from '../support/store-error.js';
import { bucketOwner } from './bucket-key.js';
import type { DenyCache } from './in-process.js';

/**
 * The most keys whose slices a limiter holds at once. A slice is for a few hot keys; a flood of keys
 * gives back the slice asked for longest ago (its leftover returned to the store) to make room.
 */
export const SLICED_KEYS_KEPT = 10_000;

/** The sweep runs at most this often, however short the slices' ttl: it only returns leftovers early. */
const MIN_SWEEP_MS = 100;

/** How a {@link TokenSlices} reaches the store: given by the limiter, which owns errors and events. */
export interface SliceStore {
  /** Consumes `size` tokens of `owner` from the store, all or none (an ordinary consume). */
  take(owner: string, size: number): Promise<BucketResult>;
  /**
   * Gives `tokens` of a slice taken at `takenAtMs` (by the store's clock) back to `owner`'s bucket, no
   * more than that take still holds, without waiting and without failing. Must send before it returns
   * (so that a take asked for after it reaches the store after it).
   */
  giveBack(owner: string, tokens: number, takenAtMs: number): void;
  /** The time a store call starts, for the decision events (`NaN` when nobody listens). */
  callStarts(): number;
}

/**
 * What a check of a sliced key comes to:
 * - `'local'`: admitted from a slice, charging nothing more to the store;
 * - `'refused'`: the store had no slice to give, nor the check's cost: its answer (`result`, asked at
 *   `askedAtMs` by the slices' clock) is the check's;
 * - `'exact'`: the store had no whole slice but may have the cost: ask it for the cost alone;
 * - `'failed'`: the take failed with `error`: the limiter's `onStoreError` decides.
 * `startedMs`: when the store call the check waited for started (`NaN` for none, or nobody listening).
 */
export type SliceAnswer =
  | { readonly kind: 'local'; readonly decision: Decision; readonly startedMs: number }
  | {
      readonly kind: 'refused';
      readonly decision: Decision;
      readonly result: BucketResult;
      readonly askedAtMs: number;
      readonly startedMs: number;
    }
  | { readonly kind: 'exact' }
  | { readonly kind: 'failed'; readonly error: unknown; readonly startedMs: number };

const EXACT: SliceAnswer = Object.freeze({ kind: 'exact' });

/** What a take came to: the store's answer, or its error. */
type TakeOutcome =
  | { readonly result: BucketResult; readonly askedAtMs: number; readonly error?: undefined }
  | { readonly error: unknown };

/** One key's slice in this process. */
class Slice {
  /** Unspent tokens: 0 when there is no slice. */
  tokens = 0;
  /** By the slices' clock: the slice (or the exact mode) ends then. */
  expiresAtMs = 0;
  /** By the slices' clock: when the take's answer arrived. */
  answeredAtMs = 0;
  /** The store's answer to the take: the bucket after `size` was charged. */
  result: BucketResult | undefined = undefined;
  /** The store had no whole slice: checks ask it for their cost, until it has `size` again. */
  exact = false;
  /** The take on its way, shared by every check of the key that waits for it. */
  taking: Promise<TakeOutcome> | undefined = undefined;
  takeStartedMs = Number.NaN;
}

/**
 * The slices of one limiter (whose one policy has a `slice`), per key, bounded by
 * {@link SLICED_KEYS_KEPT}. Leftovers of expired slices go back on the key's next check, or by a sweep
 * every `ttl` whose timer is unref'd and runs only while slices are held.
 *
 * @example
 * const slices = new TokenSlices(policies, { size: 100, ttlMs: 1_000 }, sliceStore, store.clock);
 * const answer = slices.spend(owner, 1) ?? (await slices.take(owner, 1)); // a Decision, or a SliceAnswer
 */
export class TokenSlices {
  readonly #policies: readonly ResolvedPolicy[];
  readonly #policy: ResolvedPolicy;
  readonly #size: number;
  readonly #ttlMs: number;
  readonly #store: SliceStore;
  readonly #now: () => number;
  readonly #maxKeys: number;
  readonly #slices = new Map<string, Slice>();
  #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(
    policies: readonly ResolvedPolicy[],
    slice: ResolvedTokenSlice,
    store: SliceStore,
    clock: (() => number) | undefined,
    maxKeys = SLICED_KEYS_KEPT,
  ) {
    this.#policies = policies;
    this.#policy = policies[0] as ResolvedPolicy;
    this.#size = slice.size;
    this.#ttlMs = slice.ttlMs;
    this.#store = store;
    this.#now = clock ?? (() => performance.now());
    this.#maxKeys = maxKeys;
  }

  /** Tokens taken at once: a check costing more asks the store directly. */
  get size(): number {
    return this.#size;
  }

  /** How many keys hold a slice (or wait for one): for tests, not API. */
  get keys(): number {
    return this.#slices.size;
  }

  /** Admits `cost` from `owner`'s live slice if it holds that much; `undefined` otherwise. */
  spend(owner: string, cost: number): Decision | undefined {
    const slice = this.#slices.get(owner);
    if (slice === undefined || slice.tokens < cost) return undefined;
    const nowMs = this.#now();
    if (nowMs >= slice.expiresAtMs) return undefined;
    slice.tokens -= cost;
    return this.#decision(slice, cost, nowMs);
  }

  /** What `consume` would answer from `owner`'s live slice, charging nothing; `undefined`: ask the store. */
  peek(owner: string, cost: number): Decision | undefined {
    const slice = this.#slices.get(owner);
    if (slice === undefined || slice.tokens < cost) return undefined;
    const nowMs = this.#now();
    return nowMs < slice.expiresAtMs ? this.#decision(slice, cost, nowMs) : undefined;
  }

  /**
   * Admits `cost` from a new slice: joins the take on its way for `owner`, or gives the old slice's
   * leftover back and asks for a new one. Call it when {@link spend} found no tokens.
   */
  async take(owner: string, cost: number): Promise<SliceAnswer> {
    for (;;) {
      const slice = this.#takingSlice(owner);
      if (slice === undefined) return EXACT;
      const taking = slice.taking as Promise<TakeOutcome>;
      const startedMs = slice.takeStartedMs;
      const outcome = await taking;
      if (outcome.error !== undefined || !('result' in outcome)) {
        return { kind: 'failed', error: outcome.error, startedMs };
      }
      const { result, askedAtMs } = outcome;
      if (!result.applied) {
        if (this.#fits(result, cost)) return EXACT;
        return {
          kind: 'refused',
          decision: decide(this.#policies, result, cost),
          result,
          askedAtMs,
          startedMs,
        };
      }
      const decision = this.spend(owner, cost);
      if (decision !== undefined) return { kind: 'local', decision, startedMs };
      // Checks that waited before this one spent the slice: the next take is shared in turn.
    }
  }

  /**
   * An answer the store gave a check of `owner` at its exact cost: once it shows a whole slice left,
   * checks take slices again.
   */
  observed(owner: string, decision: Decision): void {
    const slice = this.#slices.get(owner);
    if (slice?.exact === true && !decision.degraded && decision.decidedBy.remaining >= this.#size) {
      slice.exact = false;
    }
  }

  /** Forgets `owner`'s slice without giving it back: its buckets were reset, the slice's charge with them. */
  drop(owner: string): void {
    this.#slices.delete(owner);
  }

  /** Gives back the leftovers of every expired slice, and forgets them. Run by the timer; public for tests. */
  sweep(): void {
    const nowMs = this.#now();
    for (const [owner, slice] of this.#slices) {
      if (slice.taking !== undefined || nowMs < slice.expiresAtMs) continue;
      this.#slices.delete(owner);
      if (slice.tokens > 0) this.#store.giveBack(owner, slice.tokens, takenAt(slice));
    }
    if (this.#slices.size === 0) this.#stopSweeping();
  }

  /**
   * The slice of `owner` with a take on its way, starting one (after giving back what is left) unless
   * one is already; `undefined` when the key is in exact mode.
   */
  #takingSlice(owner: string): Slice | undefined {
    let slice = this.#slices.get(owner);
    if (slice?.taking !== undefined) return slice;
    const nowMs = this.#now();
    if (slice === undefined) {
      slice = new Slice();
    } else {
      if (slice.exact && nowMs < slice.expiresAtMs) return undefined;
      // Before the take: it lands first.
      if (slice.tokens > 0) this.#store.giveBack(owner, slice.tokens, takenAt(slice));
      this.#slices.delete(owner); // to the back: the map is ordered by last take, oldest evicted first
    }
    slice.tokens = 0;
    slice.result = undefined;
    slice.exact = false;
    this.#keep(owner, slice);
    slice.takeStartedMs = this.#store.callStarts();
    slice.taking = this.#send(owner, slice, nowMs);
    return slice;
  }

  /** Asks the store for a slice and, when it answers, fills `slice` (unless reset dropped it meanwhile). */
  async #send(owner: string, slice: Slice, askedAtMs: number): Promise<TakeOutcome> {
    let outcome: TakeOutcome;
    try {
      outcome = { result: await this.#store.take(owner, this.#size), askedAtMs };
    } catch (error) {
      outcome = { error: error ?? new StoreUnavailableError('the store failed without an error') };
    }
    slice.taking = undefined;
    if (this.#slices.get(owner) !== slice) return outcome;
    const answeredAtMs = this.#now();
    // Timed from the ask: the store charged the slice no earlier, so it is never spent past its window.
    slice.expiresAtMs = askedAtMs + this.#ttlMs;
    if (outcome.error === undefined && 'result' in outcome) {
      slice.result = outcome.result;
      slice.answeredAtMs = answeredAtMs;
      if (outcome.result.applied) slice.tokens = this.#size;
      else slice.exact = true;
    } else {
      this.#slices.delete(owner); // nothing taken: the next check asks again
    }
    return outcome;
  }

  /** Holds `slice`, making room first (the slice asked for longest ago goes, its leftover given back). */
  #keep(owner: string, slice: Slice): void {
    if (this.#slices.size >= this.#maxKeys) {
      for (const [oldest, old] of this.#slices) {
        if (old.taking !== undefined) continue; // its checks are waiting for it
        this.#slices.delete(oldest);
        if (old.tokens > 0) this.#store.giveBack(oldest, old.tokens, takenAt(old));
        break;
      }
    }
    this.#slices.set(owner, slice);
    if (this.#sweeper === undefined) {
      this.#sweeper = setInterval(() => this.sweep(), Math.max(MIN_SWEEP_MS, this.#ttlMs));
      this.#sweeper.unref(); // a sweep never keeps a process alive: what it would return, a restart loses
    }
  }

  #stopSweeping(): void {
    if (this.#sweeper === undefined) return;
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  /** Whether `cost` fits in the bucket a refused take found. */
  #fits(result: BucketResult, cost: number): boolean {
    const state = result.states[0] as readonly number[];
    return ALGORITHMS[this.#policy.algorithm].fits(this.#policy, state, 0, cost, result.nowMs);
  }

  /**
   * A decision answered from `slice`: the bucket the take left, brought forward by the time since, plus
   * the slice's unspent tokens, so `remaining` is an estimate: others' checks since make it high,
   * refill since (a token bucket's, a sliding window's) low.
   */
  #decision(slice: Slice, cost: number, nowMs: number): Decision {
    const result = slice.result as BucketResult;
    // Whole milliseconds, as the stores decide in: the maths stays in integers.
    const storeNowMs = result.nowMs + Math.max(0, Math.floor(nowMs - slice.answeredAtMs));
    const policy = this.#policy;
    const algorithm = ALGORITHMS[policy.algorithm];
    const state = [...(result.states[0] as readonly number[])];
    algorithm.current(policy, state, 0, true, storeNowMs);
    if (slice.tokens > 0) algorithm.refund(policy, state, 0, slice.tokens, storeNowMs, storeNowMs);
    return decide(this.#policies, { applied: true, nowMs: storeNowMs, states: [state] }, cost);
  }
}

/** When the store charged `slice`, by its clock: a slice with tokens was taken, so it has a result. */
function takenAt(slice: Slice): number {
  return (slice.result as BucketResult).nowMs;
}

/**
 * What the sliced checks use of their limiter. `Fallback`: a check's answer to a store failure (the
 * limiter's `OnStoreError`), passed through.
 */
export interface SlicedCheckContext<Fallback> {
  readonly policies: readonly ResolvedPolicy[];
  readonly namespace: string;
  readonly timeoutMs: number | undefined;
  /** The store's injected clock, if any. */
  readonly clock: (() => number) | undefined;
  readonly events: LimiterEvents;
  readonly denyCache: DenyCache | undefined;
  /** One store call, given up on after the limiter's timeout. */
  ask(request: BucketRequest): Promise<BucketResult>;
  /** A check as a limiter without slices makes it. */
  run(key: string, cost: number, mode: BucketMode, fallback: Fallback, dryRun: boolean): Promise<Decision>;
  /** After a store failure: rethrows it, or lets the insurance decide (`published`: its event is out). */
  failedOver(
    owner: string,
    key: string,
    cost: number,
    mode: BucketMode,
    error: unknown,
    fallback: Fallback,
    startedMs: number,
    published: boolean,
  ): Promise<Decision>;
}

/** The checks of a sliced limiter. */
export interface SlicedChecks<Fallback> {
  /** `consume` of a checked `cost`. */
  consume(key: string, cost: number, fallback: Fallback, dryRun: boolean): Promise<Decision>;
  /** What `consume` would answer from this process's slice of `key`; `undefined`: ask the store. */
  peek(key: string, cost: number): Decision | undefined;
  /** Forgets this process's slice of `owner`: its buckets are being reset. */
  drop(owner: string): void;
}

/**
 * The checks of a limiter whose one policy has `slice`.
 *
 * @example
 * const sliced = slicedChecks(policies[0].slice, context);
 * const decision = await sliced.consume('tenant:acme', 1, 'insurance', false);
 */
export function slicedChecks<Fallback>(
  slice: ResolvedTokenSlice,
  context: SlicedCheckContext<Fallback>,
): SlicedChecks<Fallback> {
  const { namespace, events, denyCache, run, failedOver } = context;
  const slices = new TokenSlices(context.policies, slice, sliceStore(context), context.clock);

  /** The decision a check came to once it took (or waited for) a slice. */
  async function answerOf(
    owner: string,
    key: string,
    cost: number,
    answer: SliceAnswer,
    fallback: Fallback,
    dryRun: boolean,
  ): Promise<Decision> {
    if (answer.kind === 'exact') {
      // Near the limit: exact, as without slices, until the store has a whole slice again.
      const decision = await run(key, cost, 'consume', fallback, dryRun);
      slices.observed(owner, decision);
      return decision;
    }
    let decision: Decision;
    if (answer.kind === 'failed') {
      const { error, startedMs } = answer;
      decision = await failedOver(owner, key, cost, 'consume', error, fallback, startedMs, true);
    } else {
      if (answer.kind === 'refused')
        denyCache?.record(owner, answer.result, answer.decision, answer.askedAtMs);
      decision = answer.decision;
    }
    events.decided(owner, decision, dryRun, answer.startedMs);
    return decision;
  }

  return {
    async consume(key, cost, fallback, dryRun) {
      if (cost > slices.size) return run(key, cost, 'consume', fallback, dryRun); // exact, at the store
      const owner = bucketOwner(namespace, key);
      const spent = slices.spend(owner, cost);
      if (spent !== undefined) {
        events.decided(owner, spent, dryRun, Number.NaN); // counted like every check, with no store latency
        return spent;
      }
      const cached = denyCache?.check(owner, cost);
      if (cached !== undefined) {
        events.denyCacheHit(owner, cached);
        events.decided(owner, cached, dryRun, Number.NaN);
        return cached;
      }
      return answerOf(owner, key, cost, await slices.take(owner, cost), fallback, dryRun);
    },
    peek: (key, cost) => slices.peek(bucketOwner(namespace, key), cost),
    drop: (owner) => slices.drop(owner),
  };
}

/** How the slices reach the store: a take is an ordinary consume, a leftover an ordinary refund. */
function sliceStore<Fallback>(context: SlicedCheckContext<Fallback>): SliceStore {
  const { policies, timeoutMs, events, denyCache, ask } = context;
  return {
    async take(owner, size) {
      const startedMs = events.storeCallStarts();
      try {
        return await ask({ key: owner, policies, cost: size, mode: 'consume', timeoutMs });
      } catch (error) {
        // Published once per take, however many checks wait for it.
        if (!(error instanceof TypeError || error instanceof RangeError)) {
          events.storeFailed(owner, 'consume', error, startedMs);
        }
        throw error;
      }
    },
    giveBack(owner, tokens, takenAtMs) {
      denyCache?.forget(owner); // the levels move: what the cache holds may no longer be the store's answer
      const startedMs = events.storeCallStarts();
      const failed = (error: unknown) => events.storeFailed(owner, 'refund', error, startedMs);
      // Never awaited, never thrown into a check: a leftover lost only leaves its window short of it.
      try {
        ask({ key: owner, policies, cost: tokens, mode: 'refund', chargedAtMs: takenAtMs, timeoutMs }).catch(
          failed,
        );
      } catch (error) {
        failed(error);
      }
    },
    callStarts: () => events.storeCallStarts(),
  };
}
