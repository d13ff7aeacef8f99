/** `concurrencyLimit()`: an interceptor that holds a lease for each request in progress, until its response ends. */
import { type CallHandler, type ExecutionContext, Logger, type NestInterceptor } from '@nestjs/common';
import type { ConcurrencyLimitOptions } from '@tollgate/core';
import { concurrencyLifecycle, createHttpConcurrencyLimiter } from '@tollgate/core/adapter';
import type { Observable } from 'rxjs';
import { AnsweredAlreadyException } from './answered-already-exception.js';
import { ADAPTER, type NestHttpRequest } from './options.js';
import { CLIENT_IP_SETTING, type Lifecycle, nestRequests, onEitherPlatform } from './platforms.js';

class ConcurrencyLimitInterceptor implements NestInterceptor {
  readonly #lifecycle: Lifecycle;

  constructor(options: ConcurrencyLimitOptions<never>) {
    const logger = new Logger('Tollgate');
    const limiter = createHttpConcurrencyLimiter<never>(options, nestRequests, {
      adapter: ADAPTER,
      clientIpSetting: CLIENT_IP_SETTING,
      logger,
    });
    this.#lifecycle = onEitherPlatform((access) => concurrencyLifecycle(limiter, access));
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (context.getType() !== 'http') return next.handle();
    const http = context.switchToHttp();
    const handled = await this.#lifecycle(http.getRequest(), http.getResponse());
    if (handled.kind === 'next') return next.handle();
    // Stopped: the client is gone (or the head is out), so what Nest's filter answers reaches nobody.
    throw handled.kind === 'error' ? handled.error : new AnsweredAlreadyException();
  }
}

/**
 * A concurrency limit as an interceptor: at most `limit` requests of one client in progress at once
 * (open uploads, expensive reports), rather than per window. A request's lease is released when its
 * response is over: finished, or closed because the client went away. A refused request gets a
 * `RateLimitException` (429, problem details) for the exception filters. Built once, where it is used.
 *
 * @example
 * @UseInterceptors(concurrencyLimit({ limit: 2, key: byUser((req: Request) => req.user?.id), store }))
 * @Post('uploads')
 * upload() {}
 */
export function concurrencyLimit<Req = NestHttpRequest>(
  options: ConcurrencyLimitOptions<Req>,
): NestInterceptor {
  return new ConcurrencyLimitInterceptor(options as ConcurrencyLimitOptions<never>);
}
