/**
 * A short, stable name for a set of policies, part of every stored key: all policies of one identity are
 * stored together, so a limiter whose policies change (a new limit, an added policy) starts on fresh
 * buckets rather than misreading levels written for other numbers.
 */
import { createHash } from 'node:crypto';
import type { ResolvedPolicy } from '../policy.js';

const computed = new WeakMap<readonly ResolvedPolicy[], string>();

/**
 * 12 base64url characters of a SHA-256 over each policy's name, algorithm and numbers; cached per (frozen) policy
 * array, so a limiter pays for it once.
 *
 * @example
 * policySetKey(limiter.policies); // 'Xq3v0Jc9a1Rb'
 */
export function policySetKey(policies: readonly ResolvedPolicy[]): string {
  let key = computed.get(policies);
  if (key === undefined) {
    const shape = policies.map(({ name, algorithm, limit, windowMs, capacity }) => [
      name,
      algorithm,
      limit,
      windowMs,
      capacity,
    ]);
    key = createHash('sha256').update(JSON.stringify(shape)).digest('base64url').slice(0, 12);
    computed.set(policies, key);
  }
  return key;
}
