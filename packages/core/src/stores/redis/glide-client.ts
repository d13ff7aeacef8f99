/** The store's adapter for Valkey GLIDE clients (`GlideClient`, `GlideClusterClient` of `@valkey/valkey-glide` v2). */
import {
  type ConnectionState,
  evalshaThenEval,
  type GlideClientLike,
  type GlideClusterClientLike,
  type GlideRouteLike,
  type LuaScript,
  type RedisClientAdapter,
} from './redis-client.js';

/**
 * A GLIDE client as the store sees it. Scripts go as `customCommand(['EVALSHA', …])`, and EVAL only on
 * NOSCRIPT, as with the other clients: GLIDE's own `invokeScript` needs a `Script` made with GLIDE's
 * module (the core has no dependency on it) and released by hand. On a cluster, each command is routed
 * to the primary that owns its first key's slot, as GLIDE's `primarySlotKey` route says.
 *
 * GLIDE tells nothing of its connection: it reconnects by itself, and a command sent meanwhile waits for
 * the connection up to GLIDE's `requestTimeout` (default 250 ms), then fails with its `TimeoutError`. So
 * the client counts as connected until it is closed; while Redis is away the first checks fail after
 * `requestTimeout` or the store's own timeout, the earlier, and the breaker then answers at once.
 * GLIDE does not resend a command that may have reached the server (valkey-glide#2479; it follows
 * MOVED and ASK, which Redis did not run).
 *
 * Hence the `requestTimeout` to create it with: the limiter's `timeout` (default 1 s). Shorter, GLIDE
 * gives up on a script that Redis may still run before the store's deadline, charging a check that the
 * insurance limiter decided too; longer, GLIDE holds checks while it reconnects and sends them after the
 * store gave up — past their deadline, so they change nothing, but they reach Redis.
 */
export class GlideAdapter implements RedisClientAdapter {
  readonly #client: GlideClientLike | GlideClusterClientLike;
  readonly #cluster: GlideClusterClientLike | undefined;

  constructor(client: GlideClientLike | GlideClusterClientLike) {
    this.#client = client;
    this.#cluster = isGlideCluster(client) ? client : undefined;
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
      isGlideNoScript,
    );
  }

  del(key: string): Promise<unknown> {
    return this.#send(key, ['DEL', key]);
  }

  /** Connected until closed: GLIDE shows no connection state (its `isClosed` is the one flag it keeps). */
  state(): ConnectionState {
    return (this.#client as { isClosed?: unknown }).isClosed === true ? 'down' : 'ready';
  }

  /** `createClient()` resolves once connected (or, with `lazyConnect`, the first command connects). */
  firstReady(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Nothing to warn about: GLIDE holds a command only while it reconnects, for at most its
   * `requestTimeout`, and no option turns that off; a check it sends late finds its deadline passed.
   */
  queueing(): undefined {
    return undefined;
  }

  /** GLIDE answers a RESP3 map as a list of `{ key, value }` records: made a `Map` here. */
  async configGet(pattern: string): Promise<unknown> {
    const reply = await this.#send(undefined, ['CONFIG', 'GET', pattern]);
    if (!Array.isArray(reply) || !reply.every(isRecord)) return reply;
    return new Map(reply.map(({ key, value }) => [String(key), String(value)]));
  }

  /**
   * GLIDE's `RequestError` is Redis refusing the command; its subclasses (`TimeoutError`,
   * `ConnectionError`, `ClosingError`'s kin) mean Redis is out of reach, and none sets a name of its own.
   */
  isReplyError(error: unknown): boolean {
    return error instanceof Error && Object.getPrototypeOf(error)?.constructor?.name === 'RequestError';
  }

  #send(key: string | undefined, args: string[]): Promise<unknown> {
    if (this.#cluster === undefined) return (this.#client as GlideClientLike).customCommand(args);
    const route: GlideRouteLike = key === undefined ? 'randomNode' : { type: 'primarySlotKey', key };
    return this.#cluster.customCommand(args, { route });
  }
}

/** A `GlideClusterClient`: only it has `invokeScriptWithRoute`. */
function isGlideCluster(client: GlideClientLike | GlideClusterClientLike): client is GlideClusterClientLike {
  return typeof (client as Partial<GlideClusterClientLike>).invokeScriptWithRoute === 'function';
}

/**
 * GLIDE words Redis's NOSCRIPT reply as `An error was signalled by the server: - NoScriptError: No
 * matching script…` (its Rust core's error kind); Redis's own wording is taken too.
 */
function isGlideNoScript(error: Error): boolean {
  return error.message.startsWith('NOSCRIPT') || error.message.includes('NoScriptError:');
}

function isRecord(entry: unknown): entry is { key: unknown; value: unknown } {
  return typeof entry === 'object' && entry !== null && 'key' in entry && 'value' in entry;
}
