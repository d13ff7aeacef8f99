/**
 * One app server of the demo, run as a child process by `index.ts`: a tiny Express app limited to
 * LIMIT_PER_MINUTE requests a minute per client. Its environment says which store to use (`REDIS_URL`,
 * empty for memory) and under which limiter name (`LIMITER_NAME`); it reports its port over IPC.
 */
import type { AddressInfo } from 'node:net';
import { MemoryStore, RedisStore, rateLimit } from '@tollgate/express';
import express from 'express';
import { Redis } from 'ioredis';
import { LIMIT_PER_MINUTE } from './settings.js';

/** What the app process tells its parent once it listens. */
export interface ReadyMessage {
  readonly readyOnPort: number;
}

const limiterName = process.env.LIMITER_NAME;
if (!limiterName) throw new Error('app-server.ts is started by index.ts, which sets LIMITER_NAME');
const redis = process.env.REDIS_URL
  ? new Redis(process.env.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0 })
  : undefined;
const store = redis
  ? new RedisStore({ client: redis, prefix: 'tollgate:example-distributed:' })
  : new MemoryStore();

const app = express();
// The proxy in front runs on loopback: trust its X-Forwarded-For, so the key is the client's IP.
app.set('trust proxy', 'loopback');
app.use(
  rateLimit({
    name: limiterName,
    limit: LIMIT_PER_MINUTE,
    window: '1m',
    store,
    // A store failure should show up in the table as an error, not pass as an allowed request.
    failOpen: false,
  }),
);
app.get('/', (_req, res) => {
  res.send(`served by process ${process.pid}\n`);
});

const server = app.listen(0, '127.0.0.1', (error?: Error) => {
  if (error) throw error;
  // The parent may have been stopped while this process was starting.
  if (!process.connected) return void stop();
  const ready: ReadyMessage = { readyOnPort: (server.address() as AddressInfo).port };
  process.send?.(ready);
});

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  server.close();
  // The proxy keeps idle connections open; nothing is in flight when the demo stops us.
  server.closeAllConnections();
  // QUIT waits for Redis to answer; if Redis is gone it would wait forever.
  if (redis?.status === 'ready') await redis.quit();
  else redis?.disconnect();
  // The IPC channel to the parent would keep this process alive.
  process.exit(0);
}

process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
// The parent is gone (crashed, or killed): do not outlive it.
process.on('disconnect', () => void stop());
