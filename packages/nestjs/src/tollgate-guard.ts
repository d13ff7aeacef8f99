/** `TollgateGuard`: charges each HTTP request to its route's limiter, sets the headers, refuses with an exception. */
import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { TollgateLimiters } from './tollgate-limiters.js';

/**
 * The guard that rate-limits. Use it app-wide (`{ provide: APP_GUARD, useClass: TollgateGuard }`) or
 * on a controller or handler (`@UseGuards(TollgateGuard)`), not both on one route (it would charge
 * twice). A route's limiter is its `@RateLimit` (the handler's, else its controller's), else the
 * module's app-wide one; `@SkipRateLimit()` lets a route through.
 *
 * An allowed request gets the rate-limit headers and its `RateLimitInfo` on `req.rateLimit` (Express
 * `req`, Fastify `request`). A refused one gets the headers too, and a `RateLimitException` (429, or 403
 * when its cost exceeds a capacity) for the exception filters. A request whose client has gone, or
 * whose response head something else already sent, is not served: the guard answers `false`, and Nest's
 * `ForbiddenException` reaches nobody. Only HTTP requests are limited (not RPC or WebSocket contexts).
 *
 * @example
 * @Module({
 *   imports: [TollgateModule.forRoot({ limit: 100, window: '1m', store })],
 *   providers: [{ provide: APP_GUARD, useClass: TollgateGuard }],
 * })
 * export class AppModule {}
 */
export class TollgateGuard implements CanActivate {
  constructor(private readonly limiters: TollgateLimiters) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const lifecycle = this.limiters.forRoute(context.getHandler(), context.getClass());
    if (lifecycle === undefined) return true;
    const http = context.switchToHttp();
    const handled = await lifecycle(http.getRequest(), http.getResponse());
    if (handled.kind === 'error') throw handled.error;
    return handled.kind === 'next';
  }
}

// Decorated by calls, not by syntax: this file then compiles the same under any TypeScript setup (tsx, for
// one, compiles a workspace package's source with TC39 decorators), and needs no `emitDecoratorMetadata`.
Injectable()(TollgateGuard);
Inject(TollgateLimiters)(TollgateGuard, undefined, 0);
