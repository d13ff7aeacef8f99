/** What a load generator is given and what it measures: the types both generators and the bench share. */

/** One run of load against one server. */
export interface LoadSpec {
  readonly url: string;
  readonly connections: number;
  readonly durationSec: number;
  readonly header: string;
  /** Every request carries `${keyPrefix}${n}` with n drawn uniformly from 1..keys (1: always the same). */
  readonly keyPrefix: string;
  readonly keys: number;
}

/** What a run measured, from the load generator's side. */
export interface LoadResult {
  /** Responses received. */
  readonly requests: number;
  readonly durationSec: number;
  /** Responses by HTTP status, e.g. `{ '200': 51234 }`. */
  readonly statuses: Readonly<Record<string, number>>;
  /** Connect, read and write errors and timeouts. */
  readonly socketErrors: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** A load generator: `wrk`, or autocannon in this process. */
export interface LoadGenerator {
  /** How the report names it, with its version. */
  readonly name: string;
  run(spec: LoadSpec): Promise<LoadResult>;
}
