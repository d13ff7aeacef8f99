/**
 * The store's adapter for ioredis `Redis` and `Cluster` (v5, v6), for iovalkey's (0.4: a fork of ioredis
 * 5, the same classes under the Valkey project's name), and for clients of the same shape.
 */

import { TollgateOptionError } from '../../support/option-error.js';
import {
  type ConnectionState,
  evalshaThenEval,
  type IoRedisClientLike,
  type IoRedisPipelineLike,
  type LuaScript,
  type Queueing,
  type RedisClientAdapter,
} from './redis-client.js';

/** Statuses of an ioredis client that has not yet tried, or is still trying, to connect for the first time. */
const STARTING = new Set(['wait', 'connecting', 'connect']);

/**
 * An ioredis client as the store sees it. Its `status` says whether it is connected; `'reconnecting'`
 * and the like mean a connection was lost. A client without `status` is taken as always connected.
 */
export class IoRedisAdapter implements RedisClientAdapter {
  readonly #client: IoRedisClientLike;
  /** Whether commands go through a pipeline of their own (see {@link #now}). */
  readonly #ownPipeline: boolean;
  #wasReady = false;
  #firstReady: Promise<void> | undefined;

  constructor(client: IoRedisClientLike) {
    this.#client = client;
    // A client connected before the store was made is past its start: a check that comes while it
    // reconnects must fail fast, not wait as for a first connection.
    this.#wasReady = client.status === 'ready';
    const options = client.options as { enableAutoPipelining?: unknown } | undefined;
    this.#ownPipeline = typeof client.pipeline === 'function' && options?.enableAutoPipelining === true;
  }

  get clustered(): boolean {
    return this.#client.isCluster === true;
  }

  runScript(
    { sha1, source }: LuaScript,
    keys: readonly string[],
    args: readonly string[],
    resent?: () => readonly string[],
  ): Promise<unknown> {
    return evalshaThenEval(
      () => this.#now('evalsha', sha1, keys.length, ...keys, ...args),
      () => this.#now('eval', source, keys.length, ...keys, ...(resent?.() ?? args)),
    );
  }

  /**
   * The command, written now. With auto-pipelining on, through a pipeline of its own: ioredis's
   * auto-pipelining holds a command back while an earlier pipeline's answers are unread. Without it,
   * directly, which costs the client less.
   */
  async #now(command: 'evalsha' | 'eval', script: string, ...args: (string | number)[]): Promise<unknown> {
    const pipeline = this.#ownPipeline ? (this.#client.pipeline?.() as IoRedisPipelineLike) : undefined;
    if (pipeline === undefined) return this.#client[command](script, ...(args as [number]));
    pipeline[command](script, ...args);
    const [[error, reply] = [null, undefined]] = (await pipeline.exec()) ?? [];
    if (error) throw error;
    return reply;
  }

  del(key: string): Promise<unknown> {
    return this.#client.del(key);
  }

  state(): ConnectionState {
    const { status } = this.#client;
    if (status === undefined || status === 'ready') {
      this.#wasReady = true;
      return 'ready';
    }
    return !this.#wasReady && STARTING.has(status) && typeof this.#client.once === 'function'
      ? 'starting'
      : 'down';
  }

  /** Settles when the first connection is ready; starts a lazy client connecting, as its first command would. */
  firstReady(): Promise<void> {
    this.#firstReady ??= new Promise<void>((resolve) => {
      this.#client.once?.('ready', resolve);
      if (this.#client.status === 'wait') this.#client.connect?.().catch(() => {}); // errors go to 'error' listeners
    });
    return this.#firstReady;
  }

  /** Its offline queue, or resending commands that were in flight when the connection dropped. */
  queueing(): Queueing | undefined {
    const options = this.#client.options as Record<string, unknown> | undefined;
    if (options === undefined) return undefined;
    const problems: string[] = [];
    if (options.enableOfflineQueue !== false) problems.push('enableOfflineQueue is on');
    // A Cluster's node connections never reconnect, so only a standalone client resends in-flight commands.
    // (A Cluster made without `redisOptions` has none in its options: `isCluster` says it.)
    const isCluster = this.#client.isCluster === true || 'redisOptions' in options;
    if (!isCluster && options.maxRetriesPerRequest !== 0 && options.autoResendUnfulfilledCommands !== false) {
      problems.push(`maxRetriesPerRequest is ${String(options.maxRetriesPerRequest)}, not 0`);
    }
    if (problems.length === 0) return undefined;
    return { why: problems.join(' and '), fix: '{ enableOfflineQueue: false, maxRetriesPerRequest: 0 }' };
  }

  configGet(pattern: string): Promise<unknown> {
    if (typeof this.#client.call !== 'function')
      return Promise.reject(new TollgateOptionError('RedisStore client has no call()'));
    return this.#client.call('CONFIG', 'GET', pattern);
  }

  isReplyError(error: unknown): boolean {
    return error instanceof Error && error.name === 'ReplyError';
  }
}
