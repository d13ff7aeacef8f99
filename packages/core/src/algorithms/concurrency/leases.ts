/**
 * Leases in TypeScript: the reference that `concurrency.lua.ts` mirrors. A key holds at most `limit`
 * leases at once; a lease ends when it is released or when its time to live has passed.
 */

/** A key's leases: lease id → when it expires (ms since the epoch). */
export type Leases = Map<string, number>;

/** What an acquire or a release found: whether it took effect, and the leases held after it. */
export interface LeaseOutcome {
  readonly applied: boolean;
  readonly held: number;
}

/** Forgets the leases past their expiry: their holders never released them. */
function dropExpired(leases: Leases, nowMs: number): void {
  for (const [id, expiresAtMs] of leases) if (expiresAtMs <= nowMs) leases.delete(id);
}

/** Takes a lease for `ttlMs` if fewer than `limit` are held. */
export function acquireLease(
  leases: Leases,
  id: string,
  limit: number,
  ttlMs: number,
  nowMs: number,
): LeaseOutcome {
  dropExpired(leases, nowMs);
  if (leases.size >= limit) return { applied: false, held: leases.size };
  leases.set(id, nowMs + ttlMs);
  return { applied: true, held: leases.size };
}

/**
 * When the last of `leases` ends, in ms since the epoch: after it the key holds nothing and can go (the
 * Redis script's `PEXPIRE`). A store that must forget a key early forgets the one ending soonest.
 */
export function lastLeaseEndsAtMs(leases: Leases): number {
  let endsAtMs = Number.NEGATIVE_INFINITY;
  for (const expiresAtMs of leases.values()) if (expiresAtMs > endsAtMs) endsAtMs = expiresAtMs;
  return endsAtMs;
}

/** Ends a lease; ending one that already ended (released, or expired) changes nothing. */
export function releaseLease(leases: Leases, id: string, nowMs: number): LeaseOutcome {
  dropExpired(leases, nowMs);
  leases.delete(id);
  return { applied: true, held: leases.size };
}
