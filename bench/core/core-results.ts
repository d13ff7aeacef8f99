/** What the core-only rows (no HTTP) measure, as the core bench's child process hands it back. */

/** A row of checks against Redis: medians over the rounds, per check. */
export interface RedisCoreRow {
  readonly label: string;
  readonly checksPerSec: number;
  /** CPU time of the checking process (process.cpuUsage: µs resolution), per check. */
  readonly nodeUsPerCheck: number;
  readonly redisUsPerCheck: number;
  readonly commandsPerCheck: number;
  readonly scriptCallsPerCheck: number;
  readonly readsPerCheck: number;
}

/** MemoryStore under 2 million distinct keys through a bounded store: throughput and the worst waits. */
export interface FloodResult {
  readonly keys: number;
  readonly maxKeys: number;
  readonly checksPerSec: number;
  readonly p999Us: number;
  readonly maxUs: number;
  /** Keys the store holds at the end: it must stay within maxKeys. */
  readonly sizeAfter: number;
}

export interface MemoryCoreRows {
  readonly hotKeyChecksPerSec: number;
  readonly spreadKeys: number;
  readonly spreadChecksPerSec: number;
  /** Heap growth per stored bucket (one key, one policy), key strings included, after a full GC. */
  readonly heapBytesPerBucket: number;
  readonly flood: FloodResult;
}

export interface CoreResults {
  readonly redis: RedisCoreRow[];
  readonly memory: MemoryCoreRows;
}

/** The line prefix the child prints its JSON results after. */
export const CORE_RESULT_PREFIX = 'CORE_RESULT ';
