/**
 * The store every limiter of the app shares: Redis when REDIS_URL is set, else this process's memory.
 * Serverless platforms run many instances of a route, each with its own memory: there, only a shared
 * Redis limits clients as a whole.
 */
import { openStore } from '@tollgate/example-support/store';

export const { store } = openStore(process.env.REDIS_URL, 'tollgate:example-next:');
