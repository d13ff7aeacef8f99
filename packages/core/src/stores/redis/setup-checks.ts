/**
 * What the store checks once about its client and server, warning through its logger: client settings
 * that would queue checks, and an eviction policy that may drop live buckets.
 */
import type { Warnings } from '../../support/warnings.js';
import type { RedisClientAdapter } from './redis-client.js';

/**
 * Warns if the client would hold checks back and send them later. `false` while the client cannot tell
 * yet (a node-redis cluster before it connects): ask again after the first answer.
 */
export function checkQueueing(client: RedisClientAdapter, warnings: Warnings): boolean {
  const queueing = client.queueing();
  if (queueing === 'unknown') return false;
  if (queueing === undefined) return true;
  warnings.once(
    'TOLLGATE_REDIS_CLIENT_QUEUES',
    `the Redis client would hold commands back and send them later (${queueing.why}). Tollgate sends no ` +
      'check while the client is not connected, but a check caught by a dropped connection may still reach ' +
      `Redis after it reconnects. Create the client with ${queueing.fix}.`,
  );
  return true;
}

/** Warns if Redis may evict buckets that are still limiting someone; asked once, after the first answer. */
export async function checkEvictionPolicy(client: RedisClientAdapter, warnings: Warnings): Promise<void> {
  const policy = await riskyEvictionPolicy(client);
  if (policy === undefined) return;
  warnings.once(
    'TOLLGATE_REDIS_EVICTION_POLICY',
    `Redis runs with maxmemory-policy ${policy}: when memory is full it may evict buckets that are still ` +
      'limiting someone, handing their clients fresh tokens. Use volatile-ttl (evicts the buckets closest to ' +
      'full first) or noeviction (writes fail when full, and checks take the fallback).',
  );
}

/** Eviction policies under which Redis never drops a bucket that is still limiting someone first. */
const SAFE_EVICTION_POLICIES = new Set(['noeviction', 'volatile-ttl']);

/**
 * The server's `maxmemory-policy` when it may evict live buckets (every `allkeys-*`, and the `volatile-*`
 * policies other than `volatile-ttl`, since every Tollgate key has an expiry). `undefined` when it is
 * safe, when `maxmemory` is 0 (no limit), or when the server does not let us ask (managed services often
 * disable CONFIG).
 */
async function riskyEvictionPolicy(client: RedisClientAdapter): Promise<string | undefined> {
  try {
    const config = configMap(await client.configGet('maxmemory*'));
    const policy = config.get('maxmemory-policy');
    if (policy === undefined || config.get('maxmemory') === '0') return undefined;
    return SAFE_EVICTION_POLICIES.has(policy) ? undefined : policy;
  } catch {
    return undefined;
  }
}

/** CONFIG GET's answer as a map: a flat array in RESP2, a map (or an object) in RESP3. */
function configMap(reply: unknown): Map<string, string> {
  if (reply instanceof Map) return new Map([...reply].map(([k, v]) => [String(k), String(v)]));
  const entries: [string, string][] = [];
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) entries.push([String(reply[i]), String(reply[i + 1])]);
  } else if (typeof reply === 'object' && reply !== null) {
    for (const [k, v] of Object.entries(reply)) entries.push([k, String(v)]);
  }
  return new Map(entries);
}
