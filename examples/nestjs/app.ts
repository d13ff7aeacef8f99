/** The NestJS app: which routes are limited, by whom, and how hard. */
import 'reflect-metadata';
import { Controller, Get, HttpCode, type INestApplication, Module, Post } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import {
  byApiKey,
  byIp,
  firstOf,
  RateLimit,
  SkipRateLimit,
  type Store,
  TollgateGuard,
  TollgateModule,
} from '@tollgate/nestjs';

/**
 * The API keys this demo issued. A real app looks a key up in its database (behind a cache: `verify` runs
 * on every request that carries a key) or checks its signature.
 */
const ISSUED_API_KEYS = new Set(['demo-key-1', 'demo-key-2']);

/** Only issued keys get a bucket of their own; any other key is charged to the client IP. */
const verify = (key: string) => ISSUED_API_KEYS.has(key);

@Controller()
class DemoController {
  // (a) A route without a @RateLimit of its own: the module's limit, 20 requests a minute per client IP.
  @Get()
  hello() {
    return 'Hello from NestJS behind Tollgate\n';
  }

  // (b) The API: 5 requests a minute per API key, instead of the app-wide limit. Requests without a key,
  // or with a made-up one, fall back to their IP: keyless callers do not all share one bucket, and
  // inventing keys never buys a new one.
  @RateLimit({ name: 'api', limit: 5, window: '1m', key: firstOf(byApiKey({ verify }), byIp()) })
  @Get('api/widgets')
  widgets() {
    return { widgets: ['sprocket', 'flange'] };
  }

  // (c) Logins: 3 attempts a minute per IP, far below the app-wide rate, so passwords cannot be guessed
  // at the speed pages are read.
  @RateLimit({ name: 'login', limit: 3, window: '1m' })
  @Post('login')
  @HttpCode(200)
  login() {
    return { signedIn: true };
  }

  // (d) Not limited: health checks come from load balancers every few seconds and must not use up
  // anyone's allowance.
  @SkipRateLimit()
  @Get('health')
  health() {
    return { status: 'ok' };
  }
}

/**
 * Builds the app on Express (Nest's default platform). Every limiter gets the module's `store` and its
 * own `name`, so its buckets are its own and keep their place in Redis when limiters are added later.
 * Behind a proxy, set `app.set('trust proxy', …)` so `req.ip`, and with it the key, is the client's.
 *
 * @example
 * const app = await createApp(new MemoryStore());
 * await app.listen(3004);
 */
export async function createApp(store: Store): Promise<INestApplication> {
  @Module({
    imports: [TollgateModule.forRoot({ name: 'site', limit: 20, window: '1m', store })],
    controllers: [DemoController],
    // Every route of every controller goes through the guard. An authentication guard, listed before
    // it, would let `key: byUser(...)` read the user.
    providers: [{ provide: APP_GUARD, useClass: TollgateGuard }],
  })
  class AppModule {}

  // Nest's startup lines off; Tollgate's warnings (through Nest's logger) stay.
  return NestFactory.create(AppModule, { logger: ['error', 'warn'] });
}
