/** The Redis-cost rows' shared types: what a driver is, the shapes it runs in, what a row measured. */
import type { Redis } from 'ioredis';

/** Whose checks a row drives: Tollgate's, a peer library's, or a floor script's. */
export type Family = 'tollgate' | 'peer' | 'floor';

/**
 * The floor scripts, by the Redis commands they run: a token bucket's and a sliding window's (on Redis's
 * clock), a fixed window's.
 */
export type FloorName = 'TIME, GET, SET PX' | 'INCR, PEXPIRE';

/** How checks reach Redis in a row. */
export interface Shape {
  readonly label: string;
  /** Checks awaited together: 1 (each awaited before the next) or a wave of 64 started at once. */
  readonly inFlight: number;
  /** Distinct keys the checks cycle through (1: one hot key). */
  readonly keys: number;
}

/** One check of `owner` (a client id, which each library turns into its own key); `false`: refused. */
export type Check = (owner: string) => Promise<boolean>;

/** A driver, ready on a freshly flushed Redis. */
export interface OpenedDriver {
  readonly check: Check;
  /** Called after the row, before the next flush: for work the driver leaves to a timer. */
  readonly close?: () => Promise<void>;
}

/** Checks of one library in one configuration: a row per shape it runs in. */
export interface CostDriver {
  readonly label: string;
  readonly family: Family;
  /**
   * The floor script this row is compared with (the one that runs its algorithm's commands); for a floor,
   * the floor it is. `undefined`: none (the plain INCR).
   */
  readonly floor: FloorName | undefined;
  /** The shapes it runs in. */
  readonly shapes: readonly Shape[];
  /** Builds the driver's limiter on `clients` (and anything it needs stored first) for these owners. */
  open(clients: DriverClients, owners: readonly string[]): Promise<OpenedDriver>;
}

/** The Redis clients drivers use, connected to the server being measured. */
export interface DriverClients {
  /** Tollgate's: no auto-pipelining (it batches checks itself), as its README recommends. */
  readonly tollgate: Redis;
  /** The peers' and the floors': auto-pipelining, which lets concurrent commands share one write. */
  readonly pipelined: Redis;
}

/** What one driver cost Redis in one shape, per check. */
export interface CostRowResult {
  readonly label: string;
  readonly family: Family;
  readonly floor: FloorName | undefined;
  readonly shape: Shape;
  readonly checks: number;
  readonly instructionsPerCheck: number;
  /** Commands Redis ran, those inside scripts included. */
  readonly commandsPerCheck: number;
  /** EVAL/EVALSHA calls. */
  readonly scriptCallsPerCheck: number;
}

/** Redis's memory per limited client: one key's worth, each client at its limit. */
export interface MemoryRowResult {
  readonly label: string;
  readonly clients: number;
  readonly bytesPerClient: number;
}
