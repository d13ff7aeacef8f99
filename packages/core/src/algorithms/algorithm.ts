/**
 * What an algorithm is to the stores: the maths of one policy's state, in TypeScript here and in Lua in
 * its `*.lua.ts` beside it, step for step, so the memory store and the Redis script agree to the bit.
 */
import type { PolicyDecision } from '../decision.js';
import type { ResolvedPolicy } from '../policy.js';

/** One policy's state: a few numbers, whose meaning is the algorithm's. */
export type PolicyState = number[];

/**
 * The operations every algorithm provides, each pure. A missing state is a fresh one: nothing counted.
 * An algorithm's availability never shrinks as time passes without charges; the deny cache relies on it.
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
  /** The state at `nowMs`: a stored one brought forward (refilled, rolled over), or a fresh one. */
  current(policy: ResolvedPolicy, stored: readonly number[] | undefined, nowMs: number): PolicyState;
  /** Whether `cost` fits in `state` at `nowMs` (the time `state` was brought to). */
  fits(policy: ResolvedPolicy, state: readonly number[], cost: number, nowMs: number): boolean;
  /** The state after charging `cost` (`sign` -1) or giving it back (`sign` 1). */
  apply(policy: ResolvedPolicy, state: readonly number[], cost: number, sign: 1 | -1): PolicyState;
  /** Ms from `nowMs` until the state says no more than a fresh one: 0 means it can be forgotten now. */
  idleMs(policy: ResolvedPolicy, state: readonly number[], nowMs: number): number;
  /** The policy's part of a decision about `cost`. */
  describe(policy: ResolvedPolicy, state: readonly number[], cost: number, nowMs: number): PolicyDecision;
}
