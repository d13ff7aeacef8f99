/**
 * The app the runtime suite serves on Bun and Deno: every scenario of `runtime-limits.ts` through
 * `withRateLimit`, through `check`, and through a Hono app, on the store `TOLLGATE_STORE` names. It runs
 * inside the runtime; the tests drive it over HTTP. `bun-server.ts` and `deno-server.ts` serve it.
 */
import {
  concurrencyLimit,
  type FetchHandler,
  type FetchRateLimitOptions,
  MemoryStore,
  RedisStore,
  rateLimit,
  type Store,
  withConcurrencyLimit,
  withRateLimit,
} from '@tollgate/fetch';
import {
  type HonoRateLimitOptions,
  concurrencyLimit as honoConcurrencyLimit,
  rateLimit as honoRateLimit,
} from '@tollgate/hono';
import { Hono } from 'hono';
import type { GetConnInfo } from 'hono/conninfo';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import {
  CONCURRENCY_LIMIT,
  RATE_LIMITS,
  type RateScenario,
  SETTLED_PATH,
  type StoreKind,
  scenarioPath,
} from './runtime-limits.ts';

/** How a process of the app is configured, from its environment. */
export interface AppSettings {
  readonly storeKind: StoreKind;
  /** Required for the Redis stores. */
  readonly redisUrl: string | undefined;
  /** The Redis key prefix: the processes of one test run share it, and no other run does. */
  readonly prefix: string;
}

/**
 * Reads `TOLLGATE_STORE` (`memory`, `ioredis` or `node-redis`), `REDIS_URL` and `TOLLGATE_PREFIX`.
 *
 * @example
 * const settings = appSettings(process.env);
 */
export function appSettings(env: Record<string, string | undefined>): AppSettings {
  const storeKind = env.TOLLGATE_STORE ?? 'memory';
  if (storeKind !== 'memory' && storeKind !== 'ioredis' && storeKind !== 'node-redis')
    throw new Error(`TOLLGATE_STORE: memory, ioredis or node-redis, not ${storeKind}`);
  return { storeKind, redisUrl: env.REDIS_URL, prefix: env.TOLLGATE_PREFIX ?? 'tollgate:runtime:' };
}

/** Where the runtime tells the client's address: the `ip` recipe for fetch, `getConnInfo` for Hono. */
export interface RuntimeAddress<Extra> {
  ip(request: Request, extra: Extra): string | undefined;
  readonly getConnInfo: GetConnInfo;
}

/** The app, served with the runtime's handler arguments (Bun's server, Deno's info). */
export interface RuntimeApp<Extra> {
  fetch(request: Request, extra: Extra): Promise<Response>;
  /** Lets go of the store (Redis connections). */
  close(): Promise<void>;
}

/** What the app waits for before answering {@link SETTLED_PATH}: bodies being sent, store calls. */
interface InFlight {
  bodies: number;
  storeCalls: number;
}

/**
 * Builds the app: its store, every limiter (once, as apps do), and its routes.
 *
 * @example
 * const app = await runtimeApp(appSettings(process.env), { ip, getConnInfo });
 */
export async function runtimeApp<Extra>(
  settings: AppSettings,
  address: RuntimeAddress<Extra>,
): Promise<RuntimeApp<Extra>> {
  const inFlight: InFlight = { bodies: 0, storeCalls: 0 };
  const opened = await openStore(settings);
  const app: Routes<Extra> = {
    store: counted(opened.store, inFlight),
    address,
    answer: (request) => streamedAnswer(request, inFlight),
    fetchRoutes: new Map(),
    hono: new Hono(),
  };
  for (const [scenario, limits] of Object.entries(RATE_LIMITS) as [RateScenario, object][]) {
    addRateScenario(app, scenario, limits);
  }
  addConcurrencyScenario(app);
  return {
    async fetch(request, extra) {
      const { pathname } = new URL(request.url);
      if (pathname === SETTLED_PATH) return settled(inFlight);
      if (pathname.startsWith('/hono/')) return app.hono.fetch(request, extra);
      const route = app.fetchRoutes.get(pathname);
      return route ? route(request, extra) : new Response('Not Found', { status: 404 });
    },
    close: opened.close,
  };
}

/** The app's routes in the making, and what every limiter of it shares. */
interface Routes<Extra> {
  readonly store: Store;
  readonly address: RuntimeAddress<Extra>;
  /** The answer of every limited route. */
  readonly answer: (request: Request) => Response;
  /** The @tollgate/fetch routes, by path. */
  readonly fetchRoutes: Map<string, FetchHandler<Request, [Extra]>>;
  readonly hono: Hono;
}

/** A rate-limit scenario's three routes: `withRateLimit`, `check` and Hono, each with its own limiter. */
function addRateScenario<Extra>(app: Routes<Extra>, scenario: RateScenario, limits: object): void {
  const { store, address, answer, fetchRoutes, hono } = app;
  const options = (adapter: string): FetchRateLimitOptions<[Extra]> => ({
    ...limits,
    name: `${adapter}:${scenario}`,
    store,
    ip: address.ip,
    // The ip scenario's 429 names the key, so a test sees which address the limiter used.
    ...(scenario === 'ip' && { onLimited: (_request, info) => keyAnswer(info.key) }),
  });
  fetchRoutes.set(
    scenarioPath('with-rate-limit', scenario),
    withRateLimit<Request, [Extra]>(answer, options('with-rate-limit')),
  );
  const limiter = rateLimit(options('check'));
  fetchRoutes.set(scenarioPath('check', scenario), async (request, extra) => {
    const result = await limiter.check(request, extra);
    return result.allowed ? result.apply(answer(request)) : result.response;
  });
  const honoOptions: HonoRateLimitOptions = {
    ...limits,
    name: `hono:${scenario}`,
    store,
    getConnInfo: address.getConnInfo,
    ...(scenario === 'ip' && { handler: (_c, info) => keyAnswer(info.key) }),
  };
  hono.get(scenarioPath('hono', scenario), honoRateLimit(honoOptions), (c) => answer(c.req.raw));
}

/** The concurrency scenario's three routes, as {@link addRateScenario}'s. */
function addConcurrencyScenario<Extra>(app: Routes<Extra>): void {
  const { store, address, answer, fetchRoutes, hono } = app;
  const slots = (adapter: string) => ({ ...CONCURRENCY_LIMIT, name: `${adapter}:concurrency`, store });
  fetchRoutes.set(
    scenarioPath('with-rate-limit', 'concurrency'),
    withConcurrencyLimit<Request, [Extra]>(answer, { ...slots('with-rate-limit'), ip: address.ip }),
  );
  const limiter = concurrencyLimit({ ...slots('check'), ip: address.ip });
  fetchRoutes.set(scenarioPath('check', 'concurrency'), async (request, extra) => {
    const result = await limiter.check(request, extra);
    return result.allowed ? result.apply(answer(request)) : result.response;
  });
  hono.get(
    scenarioPath('hono', 'concurrency'),
    honoConcurrencyLimit({ ...slots('hono'), getConnInfo: address.getConnInfo }),
    (c) => answer(c.req.raw),
  );
}

/** The 429 of the ip scenario: the key the limiter charged. */
const keyAnswer = (key: string) => Response.json({ key }, { status: 429 });

/**
 * The answer of every limited route: `?status=` (default 200), and `?chunks=` chunks, the first at once
 * and one every `?delayMs=` after (default 5), or `ok` when no chunks are asked for.
 */
function streamedAnswer(request: Request, inFlight: InFlight): Response {
  const query = new URL(request.url).searchParams;
  const status = Number(query.get('status') ?? 200);
  const chunks = Number(query.get('chunks') ?? 0);
  if (chunks === 0) return new Response('ok', { status });
  return new Response(streamedBody(chunks, Number(query.get('delayMs') ?? 5), inFlight), { status });
}

/** A body sent in `chunks` pieces; counted in `inFlight` until it was read to its end or cancelled. */
function streamedBody(chunks: number, delayMs: number, inFlight: InFlight): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let sent = 0;
  let ended = false;
  const end = () => {
    if (!ended) inFlight.bodies--;
    ended = true;
  };
  inFlight.bodies++;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (sent > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (ended) return; // cancelled while waiting
        controller.enqueue(encoder.encode(`chunk ${sent}\n`));
        sent++;
        if (sent < chunks) return;
        controller.close();
        end();
      },
      cancel: end,
    },
    { highWaterMark: 0 },
  );
}

/**
 * Answers once nothing is in flight: the bodies were sent or cancelled, and the store calls their ends
 * started are done. Checked on later turns of the event loop, since a refund starts a few microtasks
 * after the end that causes it.
 */
async function settled(inFlight: InFlight): Promise<Response> {
  const deadline = Date.now() + 10_000;
  do {
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (inFlight.bodies === 0 && inFlight.storeCalls === 0) return new Response(null, { status: 204 });
  } while (Date.now() < deadline);
  return Response.json(inFlight, { status: 503 });
}

/** The calls of the `Store` contract, each a promise. */
const STORE_CALLS = new Set<string | symbol>(['update', 'reset', 'lease', 'override']);

/** `inner`, with each of its calls counted in `inFlight` until it has settled. */
function counted(inner: Store, inFlight: InFlight): Store {
  return new Proxy(inner, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || !STORE_CALLS.has(property)) return value;
      return (...args: unknown[]) => {
        inFlight.storeCalls++;
        const call = Promise.resolve(value.apply(target, args));
        return call.finally(() => inFlight.storeCalls--);
      };
    },
  });
}

/** The store of `settings`, and how to let go of it. */
async function openStore(settings: AppSettings): Promise<{ store: Store; close(): Promise<void> }> {
  const { storeKind, redisUrl, prefix } = settings;
  if (storeKind === 'memory') return { store: new MemoryStore(), close: async () => {} };
  if (redisUrl === undefined) throw new Error(`TOLLGATE_STORE=${storeKind} needs REDIS_URL`);
  // The clients as the READMEs set them up: fail fast while Redis is away, and an 'error' listener, since
  // an error event nobody listens for is thrown (node-redis) or logged on every reconnect (ioredis).
  if (storeKind === 'ioredis') {
    const client = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    client.on('error', (error: Error) => console.error(`redis: ${error.message}`));
    await new Promise((resolve) => client.once('ready', resolve));
    return { store: new RedisStore({ client, prefix }), close: async () => void (await client.quit()) };
  }
  const client = createClient({ url: redisUrl, disableOfflineQueue: true });
  client.on('error', (error: Error) => console.error(`redis: ${error.message}`));
  await client.connect();
  return { store: new RedisStore({ client, prefix }), close: async () => void (await client.quit()) };
}
