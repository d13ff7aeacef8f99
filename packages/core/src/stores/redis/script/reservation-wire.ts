/**
 * The reservation script's wire (`reservation-script.ts`, whose contract is at its top): what the store
 * sends it and how it reads its answer. The check it runs on the buckets is laid out as the settle
 * script reads one (`wire.ts`).
 */

import { createHash } from 'node:crypto';
import type { ReservationOutcome } from '../../../model/store.js';
import type { LuaScript } from '../redis-client.js';
import { RESERVATION_LUA } from './scripts.generated.js';
import { policySetArgs, ScriptCall, type ScriptCheck } from './wire.js';

/** The script that reserves, or settles a reservation, by id. */
export const RESERVATION_SCRIPT: LuaScript = {
  source: RESERVATION_LUA,
  sha1: createHash('sha1').update(RESERVATION_LUA).digest('hex'),
};

/** The keys of a reservation call: the buckets', then the open, costs and settled records' beside them. */
export function reservationKeys(bucketKey: string): string[] {
  return [bucketKey, `${bucketKey}:r`, `${bucketKey}:rc`, `${bucketKey}:rs`];
}

/** What a reservation call sends besides the check. */
export interface ReservationArgs {
  readonly mode: 'reserve' | 'settle';
  readonly id: string;
  readonly ttlMs: number;
  readonly maxOpen: number;
  readonly actualCost: number;
  readonly maxExtraTokens: number;
}

/**
 * The reservation script's ARGV: its own seven, then the settle script's for `check` (whose cost, mode
 * and since are its last three, and are what the script changes for a settle or a peek).
 */
export function reservationArgs(
  { mode, id, ttlMs, maxOpen, actualCost, maxExtraTokens }: ReservationArgs,
  check: ScriptCheck,
  deadlineArg: string,
): string[] {
  const call = new ScriptCall(
    ({ policies, ban, overrides }) => policySetArgs(policies, ban, overrides),
    () => deadlineArg,
  );
  call.add(check);
  const checkArgs = call.args();
  const costAt = checkArgs.length - 2;
  const own = [mode, id, String(ttlMs), String(maxOpen), String(actualCost), String(maxExtraTokens)];
  return [...own, String(costAt), ...checkArgs];
}

/** The reservation script's reply: its outcome, the reservations open after, its detail, and the rest. */
export interface ReservationReply {
  readonly outcome: ReservationOutcome | 'expired';
  readonly open: number;
  /** The reserved cost (`'settled'`), when the oldest open one ends (`'too-many-open'`); else 0. */
  readonly detail: number;
  /** The settle script's answers: now, then the check's answer when it ran (see `wire.ts`). */
  readonly answers: readonly unknown[];
}

/** The reservation script's reply, read: its first three fields, then the settle script's answers. */
export function reservationReplyOf(reply: unknown): ReservationReply {
  const [outcome, open, detail, ...answers] = reply as unknown[];
  return {
    outcome: String(outcome) as ReservationReply['outcome'],
    open: Number(open),
    detail: Number(detail),
    answers,
  };
}
