/**
 * The Redis clients the store takes (ioredis and iovalkey, node-redis, Valkey GLIDE, as structural types:
 * none is a dependency) and the one internal interface their adapters give the store.
 */

/**
 * An ioredis `Redis` or `Cluster` (v5 or v6), or an iovalkey `Redis` or `Cluster` (the Valkey project's
 * fork of ioredis, same API), as far as the store uses it; so does any client with the same three methods.
 */
export interface IoRedisClientLike {
  evalsha(sha1: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  del(...keys: string[]): Promise<unknown>;
  /** `'ready'` while connected. When present, no check is sent unless it is `'ready'`. */
  readonly status?: string;
  /** The client's options, read once to warn about settings that queue commands. */
  readonly options?: object;
  /** Any command; used once to read the server's eviction policy. */
  call?(command: string, ...args: (string | number)[]): Promise<unknown>;
  /** Starts connecting a client made with `lazyConnect`. */
  connect?(): Promise<unknown>;
  /**
   * An explicit pipeline, which ioredis writes at once: its auto-pipelining would hold a command back
   * while an earlier pipeline's answers are unread, so a busy process would send checks late.
   */
  pipeline?(): unknown;
  /** `true` for an ioredis `Cluster`. */
  readonly isCluster?: boolean;
  /** Events, to learn when the first connection is ready. */
  once?(event: 'ready', listener: () => void): unknown;
}

/** An ioredis pipeline, as far as the store uses it (`IoRedisClientLike.pipeline()` returns one). */
export interface IoRedisPipelineLike {
  evalsha(...args: (string | number)[]): unknown;
  eval(...args: (string | number)[]): unknown;
  exec(): Promise<[Error | null, unknown][] | null>;
}

/**
 * A node-redis client (`createClient()` of the `redis` package, v4 to v6), as far as the store uses it.
 * Connect it yourself, as node-redis wants; until its first connection is ready, checks wait for it (up
 * to their timeout).
 */
export interface NodeRedisClientLike {
  /** Any command. The store sends EVALSHA, EVAL, DEL and, once, CONFIG GET through it. */
  sendCommand(args: string[]): Promise<unknown>;
  /** `true` from `connect()` on, until the client is closed. */
  readonly isOpen: boolean;
  /** `true` while connected. No check is sent unless it is. */
  readonly isReady: boolean;
  /** The client's options, read once to warn when its offline queue is on. */
  readonly options?: { readonly disableOfflineQueue?: boolean | undefined } | undefined;
  /** Events, to learn when the first connection is ready. */
  once(event: 'ready', listener: () => void): unknown;
}

/** A node-redis cluster (`createCluster()` of the `redis` package, v4 to v6). Connect it yourself. */
export interface NodeRedisClusterLike {
  /** Any command, sent to the node that owns `firstKey` (any node without one). */
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
  ): Promise<unknown>;
  /** `true` from `connect()` on, until the cluster is closed. */
  readonly isOpen: boolean;
  /** The master nodes and their clients: no check is sent unless every one is connected. */
  readonly masters: readonly { readonly client?: unknown }[];
}

/**
 * A Valkey GLIDE `GlideClient` (`@valkey/valkey-glide`, v2), as far as the store uses it: scripts go as
 * `customCommand(['EVALSHA', …])`. GLIDE connects in `createClient()` and reconnects by itself.
 */
export interface GlideClientLike {
  /** Any command. The store sends EVALSHA, EVAL, DEL and, once, CONFIG GET through it. */
  customCommand(args: string[]): Promise<unknown>;
  /** GLIDE's own way to run a `Script`; not used, but only GLIDE clients have it. */
  invokeScript(script: never, options?: never): Promise<unknown>;
}

/** Where a GLIDE cluster client sends a command: the primary that owns a key's slot, or any node. */
export type GlideRouteLike = { readonly type: 'primarySlotKey'; readonly key: string } | 'randomNode';

/** A Valkey GLIDE `GlideClusterClient` (v2), as far as the store uses it. */
export interface GlideClusterClientLike {
  /** Any command, sent where `route` says. */
  customCommand(args: string[], options?: { route?: GlideRouteLike }): Promise<unknown>;
  /** Only GLIDE's cluster client has it: it tells the cluster client from the standalone one. */
  invokeScriptWithRoute(script: never, options?: never): Promise<unknown>;
}

/**
 * The clients `RedisStore` takes, told apart at run time by their shape: an ioredis or iovalkey `Redis`
 * or `Cluster`, a node-redis client or cluster (v4 to v6), or a Valkey GLIDE client or cluster client.
 */
export type RedisClientLike =
  | IoRedisClientLike
  | NodeRedisClientLike
  | NodeRedisClusterLike
  | GlideClientLike
  | GlideClusterClientLike;

/**
 * Whether a check may go to Redis: at once (`'ready'`), after the first connection comes up
 * (`'starting'`: worth waiting for, as nothing is lost yet), or not at all (`'down'`: the connection was
 * lost, and a check sent now would only wait in a queue or fail).
 */
export type ConnectionState = 'ready' | 'starting' | 'down';

/** A Lua script and the SHA1 digest Redis caches it under. */
export interface LuaScript {
  readonly source: string;
  readonly sha1: string;
}

/** Why a client would hold commands back and send them later, and the options that stop it. */
export interface Queueing {
  readonly why: string;
  readonly fix: string;
}

/**
 * The store's one view of a client, whichever library made it. The store's behaviour (nothing sent while
 * disconnected, the breaker, deadlines, the setup warnings) is written once, against this.
 */
export interface RedisClientAdapter {
  /**
   * Runs `script` with these keys (one slot, on a Cluster): EVALSHA, and EVAL (which caches it again)
   * only when Redis answers NOSCRIPT. Written at once, whatever else is on its way: the store times
   * each call from when it is sent. The EVAL takes `resent()`'s arguments when given, made as it is
   * written: Redis did not run the first call, so the second is a call of its own, timed from then.
   */
  runScript(
    script: LuaScript,
    keys: readonly string[],
    args: readonly string[],
    resent?: () => readonly string[],
  ): Promise<unknown>;
  /** Whether keys of different slots must go in different calls. */
  readonly clustered: boolean;
  /** Deletes one key. */
  del(key: string): Promise<unknown>;
  /** Whether a check may go now; read before every call. */
  state(): ConnectionState;
  /** Settles when the first connection is ready; never rejects (the caller bounds the wait). */
  firstReady(): Promise<void>;
  /**
   * What would make the client queue commands: `undefined` if it fails fast, `'unknown'` while it cannot
   * tell (a node-redis cluster that has not connected yet).
   */
  queueing(): Queueing | undefined | 'unknown';
  /** `CONFIG GET pattern` on some server, in the client's reply shape; rejects when it cannot ask. */
  configGet(pattern: string): Promise<unknown>;
  /** Whether `error` is Redis refusing one command (WRONGTYPE, OOM), rather than Redis out of reach. */
  isReplyError(error: unknown): boolean;
}

/**
 * `evalsha()`, and `evalSource()` only when that failed with NOSCRIPT (the server lost its script cache:
 * a restart, a failover, SCRIPT FLUSH). Any other error is the caller's: retrying would run a check twice.
 * `isNoScript` says which errors are NOSCRIPT, for a client that words Redis's errors its own way.
 */
export async function evalshaThenEval(
  evalsha: () => Promise<unknown>,
  evalSource: () => Promise<unknown>,
  isNoScript: (error: Error) => boolean = startsWithNoScript,
): Promise<unknown> {
  try {
    return await evalsha();
  } catch (error) {
    if (!(error instanceof Error) || !isNoScript(error)) throw error;
    return evalSource();
  }
}

/** Redis's own wording: the error's message is the reply, `NOSCRIPT No matching script…`. */
function startsWithNoScript(error: Error): boolean {
  return error.message.startsWith('NOSCRIPT');
}
