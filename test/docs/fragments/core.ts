/**
 * What a fragment of the core docs may use without declaring it (`<!-- snippet: fragment core -->`):
 * `@tollgate/core`, and the app's own things the docs take as given.
 */
import type { Limiter, RedisStore } from '@tollgate/core';
import type { Redis } from 'ioredis';

export { createConcurrencyLimiter, createLimiter, MemoryStore, RedisStore } from '@tollgate/core';

/** The app's ioredis client, which fails fast, and the store every limiter shares on it. */
export declare const redis: Redis;
export declare const store: RedisStore;
/** A limiter, and the key of a client it limits. */
export declare const limiter: Limiter;
export declare const key: string;
export declare const userId: string;
/** The app's own work and checks. */
export declare function passwordIsRight(username: string, password: string): Promise<boolean>;
export declare function receiveUpload(): Promise<void>;
/** The reserve-and-settle example's model client, and the error it throws when the budget is spent. */
export declare const llm: {
  complete(prompt: string): Promise<{ text: string; usage: { totalTokens: number } }>;
};
export declare class TooManyTokens extends Error {
  constructor(retryAfterMs: number | undefined);
}
/** The reservations-by-id example's job queue: the gateway adds jobs, a worker process runs them. */
export interface CompletionJob {
  readonly data: { apiKey: string; prompt: string; reservationId: string };
}
export declare const queue: {
  add(name: string, data: CompletionJob['data']): Promise<void>;
  process(name: string, handler: (job: CompletionJob) => Promise<void>): void;
};
