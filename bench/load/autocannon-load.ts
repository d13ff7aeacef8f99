/**
 * The autocannon load generator, for machines without `wrk`. It runs in this process (which the bench
 * pins to the load core), so it competes with nothing but Redis there; it needs more CPU per request than
 * wrk, so on a fast framework it may be what limits the baseline.
 */
import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import type { LoadGenerator, LoadResult } from './load-types.js';

const { version } = createRequire(import.meta.url)('autocannon/package.json') as { version: string };

export function autocannonLoad(): LoadGenerator {
  return {
    name: `autocannon ${version} (in the bench process)`,
    async run({ url, connections, durationSec, header, keyPrefix, keys }): Promise<LoadResult> {
      const perRequest =
        keys > 1
          ? [
              {
                setupRequest: (request: { headers?: Record<string, string> }) => ({
                  ...request,
                  headers: {
                    ...request.headers,
                    [header]: `${keyPrefix}${1 + Math.floor(Math.random() * keys)}`,
                  },
                }),
              },
            ]
          : undefined;
      const result = await autocannon({
        url,
        connections,
        duration: durationSec,
        timeout: 10,
        headers: { [header]: `${keyPrefix}1` },
        ...(perRequest && { requests: perRequest }),
      });
      const statuses: Record<string, number> = {};
      for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {}))
        statuses[status] = count;
      return {
        requests: result.requests.total,
        durationSec: result.duration,
        statuses,
        socketErrors: result.errors + result.timeouts,
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
      };
    },
  };
}
