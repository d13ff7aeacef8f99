/**
 * A short, stable name for a set of policies (and its ban), part of every stored key: all policies of one identity are
 * stored together, so a limiter whose policies change (a new limit, an added policy) starts on fresh
 * buckets rather than misreading levels written for other numbers.
 */
import { createHash } from 'node:crypto';
import type { BanRule } from '../model/ban.js';
import type { ResolvedPolicy } from '../model/policy.js';

/** By the policy array, or by the ban rule when there is one (both are made once per limiter). */
const computed = new WeakMap<object, string>();

/**
 * 12 base64url characters of a SHA-256 over each policy's name, algorithm and numbers (and the ban's); cached per (frozen) policy
 * array, so a limiter pays for it once.
 *
 * @example
 * policySetKey(limiter.policies); // 'Xq3v0Jc9a1Rb'
 */
export function policySetKey(policies: readonly ResolvedPolicy[], ban?: BanRule): string {
  const cached = computed.get(ban ?? policies);
  if (cached !== undefined) return cached;
  const shape = policies.map(({ name, algorithm, limit, windowMs, capacity }) => [
    name,
    algorithm,
    limit,
    windowMs,
    capacity,
  ]);
  const key = createHash('sha256')
    .update(JSON.stringify(ban === undefined ? shape : [shape, ...ruleShape(ban)]))
    .digest('base64url')
    .slice(0, 12);
  computed.set(ban ?? policies, key);
  return key;
}

/**
 * A rule's numbers as its keys are named by: a ban alone as before penalties existed, so its stored
 * states are still read; a penalty changes the state's layout (a backoff's fields) or its meaning, so
 * its keys are others.
 */
function ruleShape({ after, durationMs, exponentialBackoff, continueExceeding }: BanRule): unknown[] {
  if (!exponentialBackoff && !continueExceeding) return [after, durationMs];
  return [after, durationMs, exponentialBackoff === true, continueExceeding === true];
}
