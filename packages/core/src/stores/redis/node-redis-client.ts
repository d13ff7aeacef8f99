/** The store's adapter for node-redis clients and clusters (`createClient`, `createCluster` of `redis` v4 to v6). */
import {
  type ConnectionState,
  evalshaThenEval,
  type LuaScript,
  type NodeRedisClientLike,
  type NodeRedisClusterLike,
  type Queueing,
  type RedisClientAdapter,
} from './redis-client.js';

/** How often a cluster's readiness is looked at while the store waits for its first connection. */
const CLUSTER_POLL_MS = 50;

/**
 * A node-redis client or cluster as the store sees it. A client is connected while `isReady`; a cluster
 * while it is open and every master's client is ready (a cluster has no event that says so).
 *
 * Unlike ioredis's lazy clients, a node-redis client is never connected by the store: node-redis wants
 * `connect()` called once, by the app, and a second call throws. Until the first connection is ready,
 * checks wait for it (up to their timeout); once one was lost, they no longer wait.
 *
 * node-redis 6 changed two defaults; neither changes what the store does:
 * - A 5 s per-command timeout (`commandOptions.timeout`). It runs only while a command waits to be
 *   written: node-redis drops it once the command is on the socket, so it never rejects a command Redis
 *   may still run (one sent into a 7 s CLIENT PAUSE is answered after 7 s). The store writes a check
 *   only while the client is ready, so its own `timeout` (default 1 s), which runs from the write, is
 *   the one that gives up; a script that runs after the store gave up finds its deadline passed and
 *   changes nothing. With a store timeout above 5 s, node-redis's rejects a command still unwritten
 *   (queued while disconnected, offline queue on) with `TimeoutError`: it never reaches Redis.
 * - RESP3. The scripts answer flat arrays of integers and strings only (no booleans, no nil, no
 *   floats, no nesting), which RESP3 sends as RESP2 does; only CONFIG GET's answer becomes an object
 *   rather than a flat list, which the eviction check reads either way.
 */
export class NodeRedisAdapter implements RedisClientAdapter {
  readonly #client: NodeRedisClientLike | NodeRedisClusterLike;
  readonly #cluster: NodeRedisClusterLike | undefined;
  #wasReady = false;
  #firstReady: Promise<void> | undefined;

  constructor(client: NodeRedisClientLike | NodeRedisClusterLike) {
    this.#client = client;
    this.#cluster = 'masters' in client ? client : undefined;
    // A client connected now, or that connects between two checks, is past its start: should it drop
    // before the next check, that check must count it as down, not starting.
    if (this.#connected()) this.#wasReady = true;
    else if (this.#cluster === undefined) void this.firstReady();
  }

  get clustered(): boolean {
    return this.#cluster !== undefined;
  }

  runScript(
    { sha1, source }: LuaScript,
    keys: readonly string[],
    args: readonly string[],
    resent?: () => readonly string[],
  ): Promise<unknown> {
    const count = String(keys.length);
    return evalshaThenEval(
      () => this.#send(keys[0], ['EVALSHA', sha1, count, ...keys, ...args]),
      () => this.#send(keys[0], ['EVAL', source, count, ...keys, ...(resent?.() ?? args)]),
    );
  }

  del(key: string): Promise<unknown> {
    return this.#send(key, ['DEL', key]);
  }

  state(): ConnectionState {
    if (this.#connected()) {
      this.#wasReady = true;
      return 'ready';
    }
    return this.#wasReady ? 'down' : 'starting';
  }

  firstReady(): Promise<void> {
    this.#firstReady ??= new Promise<void>((resolve) => {
      const ready = () => {
        this.#wasReady = true;
        resolve();
      };
      if (this.#connected()) return ready();
      if (this.#cluster === undefined) return void (this.#client as NodeRedisClientLike).once('ready', ready);
      const poll = () => (this.#connected() ? ready() : setTimeout(poll, CLUSTER_POLL_MS).unref());
      poll();
    });
    return this.#firstReady;
  }

  /** The offline queue, which holds commands while a connection is down and sends them once it is back. */
  queueing(): Queueing | 'unknown' | undefined {
    if (this.#cluster === undefined) {
      const { options } = this.#client as NodeRedisClientLike;
      return options === undefined || options.disableOfflineQueue === true ? undefined : CLIENT_QUEUES;
    }
    const nodeOptions = this.#cluster.masters.map(({ client }) => optionsOf(client));
    // Before a v4 cluster connects, its options are nowhere to be read; v5 keeps them in `_options`.
    const clusterOptions = optionsOf(this.#cluster, '_options');
    const defaults = clusterOptions && (optionsOf(clusterOptions, 'defaults') ?? {});
    const known = nodeOptions.some((options) => options !== undefined) ? nodeOptions : defaults && [defaults];
    if (known === undefined) return 'unknown';
    return known.every((options) => options?.disableOfflineQueue === true) ? undefined : CLUSTER_QUEUES;
  }

  configGet(pattern: string): Promise<unknown> {
    return this.#send(undefined, ['CONFIG', 'GET', pattern]);
  }

  /** node-redis's reply errors are instances of `ErrorReply` (v5: of its subclasses); none sets `name`. */
  isReplyError(error: unknown): boolean {
    for (let proto = error; proto instanceof Error; proto = Object.getPrototypeOf(proto)) {
      if (proto.constructor?.name === 'ErrorReply') return true;
    }
    return false;
  }

  /**
   * Sends a raw command; a cluster sends it to the node that owns `key`. Raw, because node-redis v4's
   * cluster routes `evalSha()` by no key at all (its key lookup reads the wrong argument): scripts went
   * to random nodes, came back MOVED, and failed after a few redirections.
   */
  #send(key: string | undefined, args: string[]): Promise<unknown> {
    return this.#cluster === undefined
      ? (this.#client as NodeRedisClientLike).sendCommand(args)
      : this.#cluster.sendCommand(key, false, args);
  }

  #connected(): boolean {
    if (this.#cluster === undefined) return (this.#client as { isReady?: unknown }).isReady !== false;
    const { isOpen, masters } = this.#cluster;
    // A master without a client yet connects on demand (`minimizeConnections`); one connecting is a promise.
    return (
      isOpen && masters.length > 0 && masters.every(({ client }) => client === undefined || isReady(client))
    );
  }
}

const CLIENT_QUEUES: Queueing = {
  why: 'its offline queue is on: disableOfflineQueue is not true',
  fix: '{ disableOfflineQueue: true }',
};

const CLUSTER_QUEUES: Queueing = {
  why: "its nodes' offline queue is on: disableOfflineQueue is not true",
  fix: '{ defaults: { disableOfflineQueue: true } }',
};

function isReady(client: unknown): boolean {
  return typeof client === 'object' && client !== null && (client as { isReady?: unknown }).isReady === true;
}

/** `object.options` (or `object[key]`) when it is an object of settings. */
function optionsOf(object: unknown, key = 'options'): { disableOfflineQueue?: unknown } | undefined {
  const options =
    typeof object === 'object' && object !== null ? (object as Record<string, unknown>)[key] : undefined;
  return typeof options === 'object' && options !== null ? options : undefined;
}
