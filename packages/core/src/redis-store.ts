/** Buckets in Redis, shared by every app server: each operation is one Lua script in one round trip. */
import { createHash } from 'node:crypto';
import type { ResolvedPolicy } from './policy.js';
import type { BucketRequest, BucketResult, Store } from './store.js';
import { TOKEN_BUCKET_LUA } from './token-bucket.lua.js';

/**
 * The commands the store needs from a Redis client. An ioredis `Redis` or `Cluster` (v5 or v6) fits;
 * so does any client with the same three methods.
 */
export interface RedisClientLike {
  evalsha(sha1: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  del(...keys: string[]): Promise<unknown>;
}

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** An ioredis `Redis` or `Cluster`. Auto-pipelining (`enableAutoPipelining: true`) batches concurrent checks. */
  client: RedisClientLike;
  /** Put before every key, to keep Tollgate's keys apart. No `{` or `}`. Default: `'tollgate:'`. */
  prefix?: string;
  /**
   * A clock in ms since the epoch, for tests. Default: none — the script reads the Redis server's clock,
   * so app servers with skewed clocks still share one timeline.
   */
  clock?: () => number;
}

const SCRIPT_SHA1 = createHash('sha1').update(TOKEN_BUCKET_LUA).digest('hex');

/**
 * A store on Redis or Redis Cluster. Every `update` is one EVALSHA of an atomic script (EVAL only after
 * `NOSCRIPT`, when the server has lost its script cache); every key it writes expires when its bucket
 * is full again; all keys of one identity share a hash tag, so they live in one Cluster slot.
 *
 * @example
 * import { Redis } from 'ioredis';
 * const store = new RedisStore({ client: new Redis(process.env.REDIS_URL, { enableAutoPipelining: true }) });
 */
export class RedisStore implements Store {
  readonly #client: RedisClientLike;
  readonly #prefix: string;
  readonly #clock: (() => number) | undefined;
  /** Per policy list, the script arguments that never change: computed once, not per call. */
  readonly #policyArgs = new WeakMap<readonly ResolvedPolicy[], string[]>();

  constructor(options: RedisStoreOptions) {
    const { client, prefix = 'tollgate:', clock } = options ?? ({} as RedisStoreOptions);
    if (typeof client?.evalsha !== 'function' || typeof client.eval !== 'function') {
      throw new TypeError('RedisStore needs { client }: an ioredis Redis or Cluster instance');
    }
    if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
      throw new TypeError(`RedisStore prefix must be a string without '{' or '}'; got ${String(prefix)}`);
    }
    if (clock !== undefined && typeof clock !== 'function') {
      throw new TypeError('RedisStore clock must be a function returning ms');
    }
    this.#client = client;
    this.#prefix = prefix;
    this.#clock = clock;
  }

  /** {@inheritDoc Store.update} */
  async update({ key, policies, cost, mode }: BucketRequest): Promise<BucketResult> {
    const nowArg = this.#clock ? String(Math.floor(this.#clock())) : '';
    const args = [...this.#keys(key, policies), nowArg, cost, mode, ...this.#argsOf(policies)];
    const reply = (await this.#run(policies.length, args)) as [number, number, ...string[]];
    return { applied: reply[0] === 1, nowMs: reply[1], levelUnits: reply.slice(2).map(Number) };
  }

  /** {@inheritDoc Store.reset} */
  async reset(key: string, policies: readonly ResolvedPolicy[]): Promise<void> {
    await this.#client.del(...this.#keys(key, policies));
  }

  /** EVALSHA; on NOSCRIPT only, EVAL (which also caches the script again). Any other error is the caller's. */
  async #run(numKeys: number, args: (string | number)[]): Promise<unknown> {
    try {
      return await this.#client.evalsha(SCRIPT_SHA1, numKeys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.#client.eval(TOKEN_BUCKET_LUA, numKeys, ...args);
    }
  }

  /** `{key}` is the hash tag: every policy's bucket of one key lands in the same Cluster slot. */
  #keys(key: string, policies: readonly ResolvedPolicy[]): string[] {
    const tagged = `${this.#prefix}{${key}}:`;
    return policies.map((policy) => tagged + policy.name);
  }

  #argsOf(policies: readonly ResolvedPolicy[]): string[] {
    let args = this.#policyArgs.get(policies);
    if (args === undefined) {
      args = policies.flatMap((p) => [String(p.limit), String(p.windowMs), String(p.capacityUnits)]);
      this.#policyArgs.set(policies, args);
    }
    return args;
  }
}
