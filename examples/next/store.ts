/**
 * The store every limiter of the app shares: Redis when REDIS_URL is set, else this process's memory.
 * Serverless platforms run many instances of a route, each with its own memory: there, only a shared
 * Redis limits clients as a whole.
 */
import { openStore, type SharedStore } from '@tollgate/example-support/store';

// Next.js bundles proxy.ts apart from the route handlers, each with its own copy of this module. One
// store per process, kept on globalThis, lets both count in the same buckets, in memory too, over one
// Redis connection.
const processWide = globalThis as { tollgateExampleStore?: SharedStore };
processWide.tollgateExampleStore ??= openStore(process.env.REDIS_URL, 'tollgate:example-next:');

export const { store } = processWide.tollgateExampleStore;
