/**
 * What a limiter answers in this process's memory instead of asking its store:
 * - the deny cache: once the store has said an owner must wait, further checks during that wait are
 *   answered with no round trip, for exactly the answer the store would give or a kinder one (its
 *   figures at most 1 ms old, when one refusal is answered again);
 * - the insurance: when the store fails, checks are decided by the same policies here, so an outage
 *   loosens the limit to per-process counting instead of removing it.
 */

import { decide } from '../algorithms/decide.js';
import { resolvePolicies } from '../algorithms/policies.js';
import { ALGORITHMS } from '../algorithms/registry.js';
import type { BanRule } from '../model/ban.js';
import type { Decision } from '../model/decision.js';
import type { ResolvedPolicy } from '../model/policy.js';
import type { BucketMode, BucketResult } from '../model/store.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import type { InsuranceOptions } from './limiter-options.js';

/** What the store said about an owner, and when we asked. */
interface Denial {
  /** Each policy's state when the store decided. */
  readonly states: readonly (readonly number[])[];
  /** The store's clock when it decided. */
  readonly decidedAtMs: number;
  /** This cache's clock just before the store was asked: the store decided no earlier. */
  readonly askedAtMs: number;
  /** This cache's clock when the denied request would fit: past it, the store decides again. */
  readonly untilMs: number;
  /** When the client's ban ends, by the store's clock; 0 when it is not banned. */
  readonly bannedUntilMs: number;
  /** The last refusal answered from this denial, reused while it still holds: see `MEMO_MS`. */
  memo: Memo | undefined;
}

/** A refusal the cache answered, for one cost, and until when (by the cache's clock) it may be reused. */
interface Memo {
  readonly cost: number;
  readonly decision: Decision;
  readonly fromMs: number;
  readonly untilMs: number;
}

/**
 * How long one refusal is answered again as it is: a client hammering while refused asks many times a
 * millisecond, and each answer, built afresh, costs more than the rest of the refusal. Within it the
 * refusal's figures are at most this much old (a wait of up to 1 ms longer, as many fewer tokens as
 * refill in 1 ms), and it is never reused past the moment the refused cost could fit.
 */
const MEMO_MS = 1;

/**
 * Remembers denials per owner, bounded by `maxKeys` (the oldest is dropped first: dropping one only costs
 * a round trip).
 *
 * Exact for every cost: it brings each state forward by all the time that has passed since the store
 * was asked, which is at least as much as the store's clock has moved since it decided, and no algorithm
 * frees less as time passes. So it refuses only what the store would refuse too, a smaller cost that
 * fits sooner goes to the store, and it never admits.
 * Tokens given back or reset by another process are seen once the cached wait is over.
 *
 * With a ban, every refusal must reach the store, where it is counted: the cache then keeps only bans,
 * during which there is nothing to count.
 */
export class DenyCache {
  readonly #policies: readonly ResolvedPolicy[];
  readonly #maxKeys: number;
  readonly #denials = new Map<string, Denial>();
  /** The cache's clock: the store's injected one, else this process's monotonic clock. */
  readonly now: () => number;

  readonly #onlyBans: boolean;

  constructor(
    policies: readonly ResolvedPolicy[],
    maxKeys: number,
    clock: (() => number) | undefined,
    countsRefusals = false,
  ) {
    this.#policies = policies;
    this.#maxKeys = maxKeys;
    this.now = clock ?? (() => performance.now());
    this.#onlyBans = countsRefusals;
  }

  /** The store's answer for `cost` when it is certainly a denial; `undefined`: ask the store. */
  check(owner: string, cost: number): Decision | undefined {
    const denial = this.#denials.get(owner);
    if (denial === undefined) return undefined;
    const clockMs = this.now();
    const { memo } = denial;
    if (memo !== undefined && memo.cost === cost && clockMs < memo.untilMs && clockMs >= memo.fromMs) {
      return memo.decision;
    }
    const elapsedMs = Math.max(0, clockMs - denial.askedAtMs);
    if (elapsedMs >= denial.untilMs - denial.askedAtMs) {
      this.#denials.delete(owner);
      return undefined;
    }
    // The store's clock has moved on by at most `elapsedMs`; every algorithm frees no less with time.
    const nowMs = denial.decidedAtMs + elapsedMs;
    const policies = this.#policies;
    const { bannedUntilMs } = denial;
    const states = new Array<number[]>(policies.length);
    let fits = true;
    for (let i = 0; i < policies.length; i++) {
      const policy = policies[i] as ResolvedPolicy;
      const algorithm = ALGORITHMS[policy.algorithm];
      const state = [...(denial.states[i] as readonly number[])];
      algorithm.current(policy, state, 0, true, nowMs);
      states[i] = state;
      if (!algorithm.fits(policy, state, 0, cost, nowMs)) fits = false;
    }
    if (fits && bannedUntilMs <= nowMs) return undefined;
    const decision = decide(policies, { applied: false, nowMs, states, bannedUntilMs }, cost);
    // A wait is a whole number of ms, rounded: the cost fits no sooner than 1 ms before it says. Nor
    // past the cached wait, after which the store is asked again.
    const untilMs = Math.min(clockMs + MEMO_MS, clockMs + (decision.retryAfterMs ?? 0) - 1, denial.untilMs);
    denial.memo = untilMs > clockMs ? { cost, decision, fromMs: clockMs, untilMs } : undefined;
    return decision;
  }

  /** Records the store's answer to a check asked at `askedAtMs`: a denial is kept for its wait. */
  record(owner: string, result: BucketResult, decision: Decision, askedAtMs: number): void {
    const kept = decision.reason === 'banned' || (decision.reason === 'limited' && !this.#onlyBans);
    if (!kept || decision.retryAfterMs === undefined) {
      if (this.#denials.size > 0) this.#denials.delete(owner);
      return;
    }
    if (this.#denials.size >= this.#maxKeys && !this.#denials.has(owner)) {
      this.#denials.delete(this.#denials.keys().next().value as string);
    }
    this.#denials.set(owner, {
      states: result.states,
      decidedAtMs: result.nowMs,
      askedAtMs,
      untilMs: askedAtMs + decision.retryAfterMs,
      bannedUntilMs: result.bannedUntilMs ?? 0,
      memo: undefined,
    });
  }

  /** Forgets an owner: its tokens were given back or reset here. */
  forget(owner: string): void {
    this.#denials.delete(owner);
  }
}

/** Decides checks in process memory; built on first use. */
export interface Insurance {
  /** The policies it decides by: the limiter's, each limit and burst divided by `instances`. */
  readonly policies: readonly ResolvedPolicy[];
  /**
   * Decides `mode` for `cost` tokens of `owner`'s buckets; `chargedAtMs`: for a refund, when the tokens
   * given back were charged (see `BucketRequest.chargedAtMs`).
   */
  decide(owner: string, cost: number, mode: BucketMode, chargedAtMs?: number): Promise<Decision>;
  /** Forgets an owner's buckets, so they are full (nothing to do before the store is built). */
  reset(owner: string): Promise<void>;
}

/**
 * The insurance of a limiter, from its checked settings; the store is made only when first needed. It
 * keeps time by `clock` (the main store's injected clock, if any), so tests move both together.
 *
 * @example
 * const insurance = insuranceFor(limiter.policies, { instances: 4, maxKeys: 100_000 });
 * const decision = await insurance.decide(owner, 1, 'consume'); // decision.degraded === true
 */
export function insuranceFor(
  policies: readonly ResolvedPolicy[],
  { instances, maxKeys }: Required<InsuranceOptions>,
  clock?: () => number,
  ban?: BanRule,
): Insurance {
  const share = (tokens: number) => Math.max(1, Math.floor(tokens / instances));
  const shared = resolvePolicies(
    // Each policy counts as it does on the store (a fixed window stays a fixed window), on its share.
    policies.map(({ name, algorithm, limit, windowMs, capacity, nearLimit }) => ({
      name,
      algorithm,
      limit: share(limit),
      window: windowMs,
      ...(algorithm === 'token-bucket' ? { burst: share(capacity) } : {}),
      // Near the insurance's own, smaller, limit at the same fraction.
      ...(nearLimit === undefined ? {} : { nearLimit }),
    })),
  );
  // Whether a cost can ever be admitted is the real policies' to say, not the shares': a cost only a
  // share cannot hold is charged the smallest share whole, so it waits for a full share (a 429 with a
  // wait) instead of being refused outright for as long as the outage lasts.
  const smallestCapacity = Math.min(...policies.map((p) => p.capacity));
  const smallestShare = Math.min(...shared.map((p) => p.capacity));
  let store: MemoryStore | undefined;
  return {
    policies: shared,
    async decide(owner, cost, mode, chargedAtMs) {
      store ??= new MemoryStore({ maxKeys, ...(clock ? { clock } : {}) });
      if (mode === 'consume' && cost > smallestCapacity) mode = 'peek';
      const checks = mode === 'consume' || mode === 'peek';
      const charged = checks && cost <= smallestCapacity ? Math.min(cost, smallestShare) : cost;
      const request = { key: owner, policies: shared, cost: charged, mode, ban, chargedAtMs };
      const result = await store.update(request);
      return { ...decide(shared, result, charged), cost, degraded: true };
    },
    async reset(owner) {
      await store?.reset(owner, shared, ban);
    },
  };
}
