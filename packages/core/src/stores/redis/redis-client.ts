/**
 * What the Redis store needs from a client, and what it reads about one: whether it is connected, and
 * settings that would queue checks or let Redis evict live buckets.
 */

/**
 * The commands the store needs from a Redis client. An ioredis `Redis` or `Cluster` (v5 or v6) fits;
 * so does any client with the same three methods.
 */
export interface RedisClientLike {
  evalsha(sha1: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  del(...keys: string[]): Promise<unknown>;
  /** ioredis: `'ready'` while connected. When present, no check is sent unless it is `'ready'`. */
  readonly status?: string;
  /** ioredis: the client's options, read once to warn about settings that queue commands. */
  readonly options?: object;
  /** ioredis: any command; used once to read the server's eviction policy. */
  call?(command: string, ...args: (string | number)[]): Promise<unknown>;
  /** ioredis: starts connecting a client made with `lazyConnect`. */
  connect?(): Promise<unknown>;
  /** ioredis: events, to learn when the first connection is ready. */
  once?(event: 'ready', listener: () => void): unknown;
}

/** Statuses of an ioredis client that has not yet tried, or is still trying, to connect for the first time. */
const STARTING = new Set(['wait', 'connecting', 'connect']);

/**
 * Whether a check may go to Redis: at once (`'ready'`), after the first connection comes up
 * (`'starting'`: worth waiting for, as nothing is lost yet), or not at all (`'down'`: the connection was
 * lost, and a check sent now would only wait in a queue).
 */
export class Connection {
  readonly #client: RedisClientLike;
  #wasReady = false;
  #firstReady: Promise<void> | undefined;

  constructor(client: RedisClientLike) {
    this.#client = client;
  }

  get state(): 'ready' | 'starting' | 'down' {
    const { status } = this.#client;
    if (status === undefined || status === 'ready') {
      this.#wasReady = true;
      return 'ready';
    }
    return !this.#wasReady && STARTING.has(status) && typeof this.#client.once === 'function'
      ? 'starting'
      : 'down';
  }

  /** Settles when the first connection is ready; starts a lazy client connecting. */
  firstReady(): Promise<void> {
    this.#firstReady ??= new Promise<void>((resolve) => {
      this.#client.once?.('ready', resolve);
      if (this.#client.status === 'wait') this.#client.connect?.().catch(() => {}); // errors go to 'error' listeners
    });
    return this.#firstReady;
  }
}

/**
 * Why this client would hold checks back and send them later, if it would: its offline queue, or
 * resending commands that were in flight when the connection dropped. `undefined` when it fails fast.
 */
export function queueingSettings(client: RedisClientLike): string | undefined {
  const options = client.options as Record<string, unknown> | undefined;
  if (options === undefined) return undefined;
  const problems: string[] = [];
  if (options.enableOfflineQueue !== false) problems.push('enableOfflineQueue is on');
  // A Cluster's node connections never reconnect, so only a standalone client resends in-flight commands.
  const isCluster = 'redisOptions' in options;
  if (!isCluster && options.maxRetriesPerRequest !== 0 && options.autoResendUnfulfilledCommands !== false) {
    problems.push(`maxRetriesPerRequest is ${String(options.maxRetriesPerRequest)}, not 0`);
  }
  return problems.length ? problems.join(' and ') : undefined;
}

/** Eviction policies under which Redis never drops a bucket that is still limiting someone first. */
const SAFE_EVICTION_POLICIES = new Set(['noeviction', 'volatile-ttl']);

/**
 * The server's `maxmemory-policy` when it may evict live buckets (every `allkeys-*`, and the `volatile-*`
 * policies other than `volatile-ttl`, since every Tollgate key has an expiry). `undefined` when it is
 * safe, when `maxmemory` is 0 (no limit), or when the server does not let us ask (managed services often
 * disable CONFIG).
 */
export async function riskyEvictionPolicy(client: RedisClientLike): Promise<string | undefined> {
  if (typeof client.call !== 'function') return undefined;
  try {
    const config = configMap(await client.call('CONFIG', 'GET', 'maxmemory*'));
    const policy = config.get('maxmemory-policy');
    if (policy === undefined || config.get('maxmemory') === '0') return undefined;
    return SAFE_EVICTION_POLICIES.has(policy) ? undefined : policy;
  } catch {
    return undefined;
  }
}

/** CONFIG GET's answer as a map: a flat array in RESP2, a map in RESP3. */
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

/** Whether an error is Redis refusing one command (a reply error), rather than Redis being out of reach. */
export function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}
