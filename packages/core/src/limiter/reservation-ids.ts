/**
 * Reservations by id: the options of a `reserve` that another process may settle (`id`, `ttl`), and
 * what `limiter.settle` and `limiter.cancel` answer.
 */
import { randomBytes } from 'node:crypto';
import { TollgateArgumentError } from '../support/argument-error.js';
import { type Duration, parseDuration } from '../support/duration.js';

/** How long a reservation by id is kept open, by default (`ReserveOptions.ttl`): an hour. */
export const DEFAULT_RESERVATION_TTL_MS = 3_600_000;
/** The longest a reservation may be kept open: 30 days. */
export const MAX_RESERVATION_TTL_MS = 30 * 86_400_000;
/** The longest id: a job id, a UUID or a hash fits; the store keeps it per open reservation. */
export const MAX_RESERVATION_ID_LENGTH = 200;

/**
 * What `limiter.settle` and `limiter.cancel` did: `settled: true` when this call moved the charge
 * (`reservedCost` is what the reservation had charged); else nothing changed, because the reservation
 * was settled or cancelled before (`'settled'`), or is not known (`'unknown'`: never made under this
 * key and limiter, refused, made while the store was down, or forgotten after its `ttl`).
 */
export type SettleResult =
  | { readonly settled: true; readonly reservedCost: number }
  | { readonly settled: false; readonly reason: 'unknown' | 'settled' };

/**
 * A reservation's id from `reserve`'s `id` option: the caller's (1 to 200 characters, no control
 * characters), or, for `true`, 128 random bits in base64url (22 characters): unguessable, so no one who
 * has not been given it can settle the reservation.
 *
 * @example
 * reservationIdOf(true); // 'q2d0c8ZsW4yA1n7H3kTf9w'
 */
export function reservationIdOf(id: unknown): string {
  if (id === true) return randomBytes(16).toString('base64url');
  if (
    typeof id !== 'string' ||
    id.length === 0 ||
    id.length > MAX_RESERVATION_ID_LENGTH ||
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters refused
    /[\u0000-\u001f\u007f]/.test(id)
  ) {
    throw new TollgateArgumentError(
      `a reservation id must be true (one made for you) or a string of 1–${MAX_RESERVATION_ID_LENGTH} characters without control characters; got ${describe(id)}`,
    );
  }
  return id;
}

/** `reserve`'s `ttl` in ms, checked: a duration up to 30 days; `undefined`: an hour. */
export function reservationTtlMsOf(ttl: unknown): number {
  if (ttl === undefined) return DEFAULT_RESERVATION_TTL_MS;
  let ttlMs: number;
  try {
    ttlMs = parseDuration(ttl as Duration, "reserve's ttl");
  } catch (error) {
    throw new TollgateArgumentError((error as Error).message);
  }
  if (ttlMs > MAX_RESERVATION_TTL_MS) {
    throw new TollgateArgumentError(`reserve's ttl must be 30 days or less; got ${ttlMs} ms`);
  }
  return ttlMs;
}

/** A settle's true cost, checked: a finite number, 0 or more. */
export function actualCostOf(actualCost: unknown): number {
  if (typeof actualCost !== 'number' || !Number.isFinite(actualCost) || actualCost < 0) {
    throw new TollgateArgumentError(
      `actualCost must be a finite number, 0 or more; got ${String(actualCost)}`,
    );
  }
  return actualCost;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value);
}
