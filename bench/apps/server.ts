/**
 * One app server process of the HTTP bench: a framework × variant, with one app per scenario it runs, each
 * on its own port (idle apps cost nothing, so the process's CPU time during a run is the running app's).
 * Its own process, so its CPU time can be read alone. Prints `{"<scenario>": port, …}` when every app listens.
 * argv: framework variant redisUrl keyPrefix
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import { connectBenchRedis } from '../bench-redis.js';
import {
  type AppSettings,
  type Framework,
  isPeer,
  runsScenario,
  SCENARIOS,
  type Scenario,
  usesRedis,
  type Variant,
} from './scenarios.js';

const [framework, variant, redisUrl = '', keyPrefix = ''] = process.argv.slice(2) as [
  Framework,
  Variant,
  string?,
  string?,
];

const redis = usesRedis(variant)
  ? await connectBenchRedis(redisUrl, { autoPipelining: isPeer(variant) })
  : undefined;

/** Starts the scenario's app on a free port; resolves to the port. */
async function listen(scenario: Scenario): Promise<number> {
  // Each scenario's keys apart from the others' (and from the other frameworks') in the shared Redis.
  const settings = { scenario, keyPrefix: `${keyPrefix}${framework}:${scenario.name}:` };
  // Only this framework's modules are loaded: the servers start faster.
  if (framework === 'fastify') {
    const { fastifyApp } = await import('./fastify-app.js');
    const app = await fastifyApp(variant, settings, redis);
    await app.listen({ port: 0, host: '127.0.0.1' });
    return portOf(app.server);
  }
  if (framework === 'nestjs') {
    const { nestjsApp } = await import('./nestjs-app.js');
    const app = await nestjsApp(variant, settings, redis);
    await app.listen(0, '127.0.0.1');
    return portOf(app.getHttpServer());
  }
  const server = createServer(await requestListener(framework, settings));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return portOf(server);
}

/** The app of a framework that runs as a Node.js request listener. */
async function requestListener(
  framework: 'express' | 'koa' | 'hono',
  settings: AppSettings,
): Promise<RequestListener> {
  switch (framework) {
    case 'express':
      return (await import('./express-app.js')).expressApp(variant, settings, redis);
    case 'koa':
      return (await import('./koa-app.js')).koaApp(variant, settings, redis);
    case 'hono':
      return (await import('./hono-app.js')).honoApp(variant, settings, redis);
  }
}

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no TCP port');
  return address.port;
}

const ports: Record<string, number> = {};
for (const scenario of SCENARIOS)
  if (runsScenario(variant, scenario)) ports[scenario.name] = await listen(scenario);
process.stdout.write(`${JSON.stringify(ports)}\n`);
process.on('SIGTERM', () => process.exit(0));
