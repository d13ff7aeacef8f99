/**
 * What an algorithm is to the stores: the maths of one policy's state, in TypeScript here and in Lua in
 * its `*.lua.ts` beside it, step for step, so the memory store and the Redis script agree to the bit.
 */
import type { PolicyDecision } from '../model/decision.js';
import type { ResolvedPolicy } from '../model/policy.js';

/**
 * Every state of a key, policy after policy, each at its offset: a check reads and changes them in
 * place, as the Redis script does, so it allocates nothing per policy.
 */
export interface StateFields {
  [field: number]: number;
}

/**
 * The operations every algorithm provides, on its `fields` numbers at offset `o` of `st`. A missing state
 * is a fresh one: nothing counted. An algorithm's availability never shrinks as time passes without
 * charges; the deny cache relies on it.
 */
export interface Algorithm {
  /** Its name, as policies give it. */
  readonly name: string;
  /** Its code in the Redis script. */
  readonly code: number;
  /** How many numbers its state takes in a stored key. */
  readonly fields: number;
  /** Checks the policy makes sense for this algorithm; throws a `TypeError` naming `where`. */
  validate(policy: ResolvedPolicy, where: string): void;
  /**
   * Brings the state to `nowMs` in place (refilled, rolled over); when nothing was `stored`, writes a
   * fresh one.
   */
  current(policy: ResolvedPolicy, st: StateFields, o: number, stored: boolean, nowMs: number): void;
  /** Whether `cost` fits in the state at `nowMs` (the time it was brought to). */
  fits(policy: ResolvedPolicy, st: StateFields, o: number, cost: number, nowMs: number): boolean;
  /**
   * Whether a charge of `cost` may be made now and be covered within `maxWaitMs` (a bounded wait): the
   * state may go into debt as far as `maxWaitMs` of refill repays. Only algorithms that can owe have it
   * (the token bucket); a limiter refuses `maxWait` for a policy whose algorithm lacks it.
   */
  fitsWithin?(policy: ResolvedPolicy, st: StateFields, o: number, cost: number, maxWaitMs: number): boolean;
  /**
   * Ms from the time the state was brought to until it owes nothing: when the last charge made into
   * debt is covered (a waiter's turn). Only algorithms that can owe have it.
   */
  owedMs?(policy: ResolvedPolicy, st: StateFields, o: number): number;
  /** Charges `cost`, in place, whether it fits or not. */
  apply(policy: ResolvedPolicy, st: StateFields, o: number, cost: number): void;
  /**
   * Gives back, in place, what is left at `nowMs` of a charge of `cost` made at `sinceMs` (the time the
   * state was brought to is `nowMs`): never more than that charge still holds, so a refund never reaches
   * into a window, or into tokens, that came after it. `sinceMs` equal to `nowMs`: the whole cost.
   */
  refund(
    policy: ResolvedPolicy,
    st: StateFields,
    o: number,
    cost: number,
    sinceMs: number,
    nowMs: number,
  ): void;
  /**
   * A key's limits changed (an override began or ended): the state, if it was written before `beforeMs`
   * under `from`'s limits (brought forward by them until `endsMs`, when they stopped), in place in `to`'s
   * terms, keeping what the client has used, not what it had left: 3 used of 3, then 97 left of 100.
   */
  rebase(
    from: ResolvedPolicy,
    to: ResolvedPolicy,
    st: StateFields,
    o: number,
    endsMs: number,
    beforeMs: number,
  ): void;
  /**
   * Ms from `nowMs` (the time the state was brought to) until `cost` fits: 0 when it fits now,
   * `undefined` when it never will (more than the policy holds). A decision's `retryAfterMs` is this.
   */
  waitMs(policy: ResolvedPolicy, st: StateFields, o: number, cost: number, nowMs: number): number | undefined;
  /**
   * `continueExceeding`: what a refusal of `cost` that did not fit does to the state, in place, so that a
   * client that keeps knocking stays out. Nothing for a cost more than the policy holds.
   */
  restart(policy: ResolvedPolicy, st: StateFields, o: number, cost: number, nowMs: number): void;
  /** Ms from `nowMs` until the state says no more than a fresh one: 0 means it can be forgotten now. */
  idleMs(policy: ResolvedPolicy, st: StateFields, o: number, nowMs: number): number;
  /**
   * The policy's part of a decision about `cost`, from its state alone (as a store answers it) at offset
   * `o` of `st`; a field `st` lacks counts as 0.
   */
  describe(policy: ResolvedPolicy, st: StateFields, o: number, cost: number, nowMs: number): PolicyDecision;
}

/**
 * An algorithm's part of the Redis script: its operations in Lua, the TypeScript ones step for step, on
 * the state array `st` at offset `o`, changed in place. `current`, `apply`, `refund`, `rebase` and `restart` are statements;
 * `fits` (whether the cost fits) and `idle` (the ms until the state can be forgotten) are expressions;
 * `wait` is statements that return `waitMs` (-1 for never). No other returns, and each reads its state only as `st[o]`, `st[o + 1]`, `st[o + 2]`: the script inlines them,
 * and for a check of one policy keeps the fields in locals (see `stores/redis/script/generate.ts`).
 * Every body sees its policy's `limit`, `window` (ms) and `capacity` (units), and `min`, `max`, `floor` and `ceil`; then
 * `current` sees `stored` and `now`, `fits`, `wait` and `restart` see `cost` and `now`, `apply` sees
 * `cost`, `refund` sees `cost`, `since` and `now`, and `idle` sees `now`. `rebase` sees the limits it
 * converts to as the others do, and those it converts from as `wasLimit` and `was` (the capacity), with
 * `ends` and `before`. `wait` and `restart` run only for `exponentialBackoff` and
 * `continueExceeding`, on the held path; `within` (an expression that sees `cost` and `maxWait`) only for
 * a consume that may wait, on the held path.
 */
export interface AlgorithmLua {
  readonly current: string;
  readonly fits: string;
  readonly apply: string;
  readonly refund: string;
  readonly rebase: string;
  readonly idle: string;
  readonly wait: string;
  readonly restart: string;
  /**
   * `fitsWithin` as an expression that also sees `maxWait` (ms); only for an algorithm that has
   * `fitsWithin`. The settle script runs it for a consume that may wait.
   */
  readonly within?: string;
  /**
   * The state field (1-based) that holds `now` once `current` has run, unless the clock stepped back;
   * only for an algorithm whose state keeps the time it was true. A single-check script then leaves the
   * time out of the answer it gives as text when that field holds it.
   */
  readonly nowField?: number;
  /**
   * An expression on the state as read (it sees `now`, and `window`): whether a consume applied to it
   * leaves the state to expire when the stored one does, so a single-check or batch script writes it with
   * KEEPTTL, which costs Redis much less than a new PX. Only for an algorithm whose `idle` after a consume
   * can end where the stored state's did (a window's end); never true of a state `current` renews.
   */
  readonly expiryKept?: string;
}
