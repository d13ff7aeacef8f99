/**
 * Which adapter fits a Redis client: told by its shape, so none of ioredis, iovalkey, node-redis or
 * Valkey GLIDE is a dependency.
 */
import { GlideAdapter } from './glide-client.js';
import { IoRedisAdapter } from './ioredis-client.js';
import { NodeRedisAdapter } from './node-redis-client.js';
import type {
  GlideClientLike,
  GlideClusterClientLike,
  IoRedisClientLike,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  RedisClientAdapter,
} from './redis-client.js';

/** A family of clients: what tells its clients apart from the others', and its adapter. */
interface ClientFamily {
  readonly name: string;
  matches(shape: Record<string, unknown>): boolean;
  adapt(client: object): RedisClientAdapter;
}

/**
 * The families, in the order they are tried. node-redis clients say whether they are open (`isOpen`) and
 * take raw commands (`sendCommand`); GLIDE's take them as `customCommand` and run scripts with
 * `invokeScript`; ioredis's and iovalkey's (its fork, whose classes are ioredis's) have `evalsha` and
 * `eval`. The first family that matches takes the client.
 */
const FAMILIES: readonly ClientFamily[] = [
  {
    name: 'a node-redis (v4 to v6) client or cluster',
    matches: (shape) => typeof shape.isOpen === 'boolean' && typeof shape.sendCommand === 'function',
    adapt: (client) => new NodeRedisAdapter(client as NodeRedisClientLike | NodeRedisClusterLike),
  },
  {
    name: 'a Valkey GLIDE GlideClient or GlideClusterClient',
    matches: (shape) => typeof shape.customCommand === 'function' && hasScriptInvocation(shape),
    adapt: (client) => new GlideAdapter(client as GlideClientLike | GlideClusterClientLike),
  },
  {
    name: 'an ioredis or iovalkey Redis or Cluster',
    matches: (shape) => typeof shape.evalsha === 'function' && typeof shape.eval === 'function',
    adapt: (client) => new IoRedisAdapter(client as IoRedisClientLike),
  },
];

/** The clients the store takes, in words, for the error that refuses any other. */
export const SUPPORTED_CLIENTS = FAMILIES.map(({ name }, i) =>
  i < FAMILIES.length - 1 ? name : `or ${name}`,
).join(', ');

/**
 * The adapter for `client`, or `undefined` when it is of no family the store knows.
 *
 * @example
 * const adapter = adaptRedisClient(createClient({ url })); // a NodeRedisAdapter
 */
export function adaptRedisClient(client: unknown): RedisClientAdapter | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const shape = client as Record<string, unknown>;
  return FAMILIES.find((family) => family.matches(shape))?.adapt(client);
}

/** What `client` is, in a few words, for that error: `undefined`, `a string`, `an object of class Foo`. */
export function describeClient(client: unknown): string {
  if (client === null || client === undefined) return String(client);
  if (typeof client !== 'object') return `a ${typeof client}`;
  const prototype = Object.getPrototypeOf(client) as { constructor?: { name?: unknown } } | null;
  const name = prototype?.constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object'
    ? `an object of class ${name}`
    : 'an object';
}

/** GLIDE's standalone client has `invokeScript`; its cluster client also `invokeScriptWithRoute`. */
function hasScriptInvocation(shape: Record<string, unknown>): boolean {
  return typeof shape.invokeScript === 'function' || typeof shape.invokeScriptWithRoute === 'function';
}
