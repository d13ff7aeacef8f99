// Types for the two bench dependencies that ship none: only what the bench uses.
declare module 'koa-ratelimit' {
  import type { Context, Middleware } from 'koa';

  interface KoaRateLimitOptions {
    driver: 'redis' | 'memory';
    db: unknown;
    duration?: number;
    max?: number;
    id?: (ctx: Context) => string | false;
    namespace?: string;
  }
  export default function ratelimit(options: KoaRateLimitOptions): Middleware;
}

declare module 'autocannon' {
  interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
  }
  interface AutocannonOptions {
    url: string;
    connections: number;
    duration: number;
    timeout?: number;
    headers?: Record<string, string>;
    requests?: { setupRequest?: (request: RequestParams) => RequestParams }[];
  }
  interface AutocannonResult {
    duration: number;
    errors: number;
    timeouts: number;
    requests: { total: number };
    latency: { p50: number; p99: number };
    statusCodeStats: Record<string, { count: number }>;
  }
  export default function autocannon(options: AutocannonOptions): Promise<AutocannonResult>;
}
