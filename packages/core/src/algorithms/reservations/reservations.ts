/**
 * Reservations by id in TypeScript: the reference that the Redis reservation script
 * (`stores/redis/script/reservation-script.ts`) mirrors. A key's book holds its open reservations, each
 * until it is settled or its time to live ends, and the settled ones until theirs would have ended, so
 * that a settle sent twice can say it came second.
 */

/** One reservation of a key's book. */
export interface ReservationRecord {
  /** The tokens reserved (charged when it was made). */
  readonly cost: number;
  /** When it was charged, by the store's clock (ms): a refund never reaches past that charge. */
  readonly chargedAtMs: number;
  /** When it is forgotten, open or settled (ms). */
  readonly expiresAtMs: number;
  /** Whether a settle or cancel has come: it then holds nothing but the answer to a later one. */
  settled: boolean;
}

/** A key's reservations: id → record. */
export type ReservationBook = Map<string, ReservationRecord>;

/**
 * Forgets the records past their expiry (an open one stays charged what was reserved), and answers how
 * many are open and when the oldest of them ends (`Infinity`: none is open).
 */
export function openReservations(
  book: ReservationBook,
  nowMs: number,
): { readonly open: number; readonly firstEndsAtMs: number } {
  let open = 0;
  let firstEndsAtMs = Number.POSITIVE_INFINITY;
  for (const [id, record] of book) {
    if (record.expiresAtMs <= nowMs) book.delete(id);
    else if (!record.settled) {
      open++;
      if (record.expiresAtMs < firstEndsAtMs) firstEndsAtMs = record.expiresAtMs;
    }
  }
  return { open, firstEndsAtMs };
}

/**
 * Keeps no more than `most` settled records, forgetting those that end soonest: a settled record only
 * tells a late settle that it came second, and `maxOpen` of them bound the book as the open ones are.
 */
export function trimSettled(book: ReservationBook, most: number): void {
  const settled: [string, number][] = [];
  for (const [id, record] of book) if (record.settled) settled.push([id, record.expiresAtMs]);
  if (settled.length <= most) return;
  settled.sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
  for (let i = 0; i < settled.length - most; i++) book.delete((settled[i] as [string, number])[0]);
}

/**
 * The tokens a settle at `actualCost` moves: more than 0 a penalty (at most `maxExtraTokens`), less than
 * 0 a refund, 0 nothing.
 */
export function settleDelta(reserved: number, actualCost: number, maxExtraTokens: number): number {
  return Math.min(actualCost - reserved, maxExtraTokens);
}
