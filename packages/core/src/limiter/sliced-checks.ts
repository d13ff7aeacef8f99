/**
 * The checks of a limiter whose policy has token slices: answered from this process's slice when it
 * holds the cost, else by taking a new slice, else (near the limit) by the store at the exact cost.
 */
import type { LimiterEvents } from '../diagnostics/publish.js';
import type { Decision } from '../model/decision.js';
import type { ResolvedPolicy, ResolvedTokenSlice } from '../model/policy.js';
import type { BucketMode, BucketRequest, BucketResult } from '../model/store.js';
import { bucketOwner } from './bucket-key.js';
import type { DenyCache } from './deny-cache.js';
import { type SliceAnswer, type SliceStore, TokenSlices } from './token-slices.js';

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
