/** Which adapter fits a Redis client: told by its shape, so neither ioredis nor node-redis is a dependency. */
import { IoRedisAdapter } from './ioredis-client.js';
import { NodeRedisAdapter } from './node-redis-client.js';
import type {
  IoRedisClientLike,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  RedisClientAdapter,
} from './redis-client.js';

/**
 * The adapter for `client`: node-redis clients and clusters say whether they are open (`isOpen`) and
 * take raw commands (`sendCommand`); ioredis clients have `evalsha`. `undefined` when `client` is neither.
 *
 * @example
 * const adapter = adaptRedisClient(createClient({ url })); // a NodeRedisAdapter
 */
export function adaptRedisClient(client: unknown): RedisClientAdapter | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const shape = client as Record<string, unknown>;
  if (typeof shape.isOpen === 'boolean' && typeof shape.sendCommand === 'function') {
    return new NodeRedisAdapter(client as NodeRedisClientLike | NodeRedisClusterLike);
  }
  if (typeof shape.evalsha === 'function' && typeof shape.eval === 'function') {
    return new IoRedisAdapter(client as IoRedisClientLike);
  }
  return undefined;
}
