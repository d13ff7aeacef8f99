/**
 * `@tollgate/nestjs` the Nest way, on Express and on Fastify, over real HTTP: the headers, the refusal
 * as an `HttpException` that exception filters see, `@RateLimit` on a controller and on a handler,
 * `@SkipRateLimit`, `forRootAsync`, the concurrency interceptor's leases, a store that is down, a
 * client that hung up, and bad options stopping the app at startup.
 */
import type { ServerResponse } from 'node:http';
import {
  type ArgumentsHost,
  type CanActivate,
  Catch,
  Controller,
  type ExceptionFilter,
  type ExecutionContext,
  Get,
  HttpException,
  Inject,
  Injectable,
  Module,
  Post,
  Req,
  UseInterceptors,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, HttpAdapterHost } from '@nestjs/core';
import { MemoryStore, QUOTA_EXCEEDED_TYPE, RedisStore, type Store } from '@tollgate/core';
import {
  concurrencyLimit,
  RateLimit,
  RateLimitException,
  type RateLimitInfo,
  SkipRateLimit,
  TollgateGuard,
  TollgateLimiters,
  TollgateModule,
  type TollgateModuleOptions,
  type TollgateOptionsFactory,
} from '@tollgate/nestjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, uniquePrefix } from '../harness/clients.js';
import { type RedisProcess, startRedisServer } from '../harness/redis-server.js';
import { send, until } from './lifecycle-sockets.js';
import { type NestPlatform, nestPlatforms, type RunningNestApp, startNestApp } from './nestjs-apps.js';
import { draft10, jsonBody, retryAfterSeconds } from './parse-headers.js';

const redis = await connectRedis();
afterAll(() => redis.disconnect());

const stores: [string, () => Store][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redis, prefix: uniquePrefix('nestjs-module') })],
];

const globalGuard = { provide: APP_GUARD, useClass: TollgateGuard };

type AnyRequest = { headers: Record<string, string | undefined>; rateLimit?: RateLimitInfo };

@Controller()
class HelloController {
  @Get('hello')
  hello(req: AnyRequest) {
    return { remaining: req.rateLimit?.remaining, limiter: req.rateLimit?.limiter };
  }

  @RateLimit({ limit: 5, window: '1m', cost: 6 })
  @Get('expensive')
  expensive() {
    return 'never';
  }
}

// `@Req() req` by a call: Biome's parser takes no parameter decorators (without an unsafe option).
Req()(HelloController.prototype, 'hello', 0);

/** Runs `body` against a started app, closing it after. */
async function withApp(
  platform: NestPlatform,
  metadata: Parameters<typeof startNestApp>[1],
  body: (app: RunningNestApp) => Promise<void>,
): Promise<void> {
  const app = await startNestApp(platform, metadata);
  try {
    await body(app);
  } finally {
    await app.close();
  }
}

/** What the exception filter below saw, for the app it serves. */
const seen: unknown[] = [];

@Catch(HttpException)
class RecordingFilter implements ExceptionFilter {
  @Inject(HttpAdapterHost) private readonly adapterHost!: HttpAdapterHost;

  catch(exception: HttpException, host: ArgumentsHost) {
    seen.push(exception);
    const response = host.switchToHttp().getResponse();
    const request = host.switchToHttp().getRequest<AnyRequest>();
    // One request asks for the exception's own body, unchanged; the others get the app's own shape.
    const body =
      request.headers['x-as-is'] === 'yes'
        ? exception.getResponse()
        : { error: 'slow down', limiter: (exception as RateLimitException).info?.limiter };
    this.adapterHost.httpAdapter.reply(response, body, exception.getStatus());
  }
}

@RateLimit({ limit: 1, window: '1h', name: 'controller' })
@Controller()
class PrecedenceController {
  @RateLimit({ limit: 3, window: '1h', name: 'handler' })
  @Get('own')
  own() {
    return 'own';
  }

  @Get('inherited')
  inherited() {
    return 'inherited';
  }

  @Get('inherited-too')
  inheritedToo() {
    return 'inherited too';
  }

  @SkipRateLimit()
  @Get('skipped')
  skipped() {
    return 'skipped';
  }
}

@SkipRateLimit()
@Controller('open')
class OpenController {
  @Get()
  open() {
    return 'open';
  }

  @RateLimit({ limit: 1, window: '1h' })
  @Get('but-this')
  butThis() {
    return 'limited';
  }
}

/** One options object, given to two decorators: each is a limiter of its own. */
const ONE_PER_HOUR = { limit: 1, window: '1h' } as const;

@Controller('shared')
class SharedOptionsController {
  @RateLimit(ONE_PER_HOUR)
  @Get('a')
  a() {
    return 'a';
  }

  @RateLimit(ONE_PER_HOUR)
  @Get('b')
  b() {
    return 'b';
  }
}

const LIMITS = Symbol('LIMITS');

@Module({ providers: [{ provide: LIMITS, useValue: { perMinute: 2 } }], exports: [LIMITS] })
class LimitsModule {}

/** Requests the handler holds until the test lets them finish. */
class Held {
  readonly finishers: (() => void)[] = [];
  handled = 0;
  hold(): Promise<void> {
    return new Promise((resolve) => this.finishers.push(resolve));
  }
  finishAll(): void {
    for (const finish of this.finishers.splice(0)) finish();
  }
}

/** `GET /` holds its request until the test lets it finish; `GET /quick` answers at once. One limit for both. */
function concurrencyController(store: Store, held: Held) {
  const uploads = concurrencyLimit({ limit: 1, store, name: 'uploads', leaseTtl: '1h' });
  @Controller()
  class UploadController {
    @UseInterceptors(uploads)
    @Get()
    async upload() {
      held.handled++;
      await held.hold();
      return 'uploaded';
    }

    @UseInterceptors(uploads)
    @Get('quick')
    quick() {
      return 'quick';
    }
  }
  return UploadController;
}

/** Asks `GET /quick` until it gets the slot: a released lease reaches the store a moment after the response. */
async function untilAdmitted(app: RunningNestApp): Promise<void> {
  for (let tries = 0; tries < 400; tries++) {
    if ((await app.send('GET', '/quick')).status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('the slot never came back');
}

/** The Node.js response of either platform's response. */
const rawOf = (response: unknown) =>
  ((response as { raw?: ServerResponse }).raw ?? response) as ServerResponse;

/** An authentication step before Tollgate's guard: an `x-hang-up` request waits there until its client has gone. */
function hangUpGuard(counts: { arrived: number; passed: number }) {
  return class HangUpGuard implements CanActivate {
    async canActivate(context: ExecutionContext): Promise<boolean> {
      const request = context.switchToHttp().getRequest<AnyRequest>();
      const raw = rawOf(context.switchToHttp().getResponse());
      if (request.headers['x-hang-up'] !== undefined) {
        counts.arrived++;
        await new Promise<void>((resolve) => (raw.closed ? resolve() : raw.once('close', () => resolve())));
      }
      counts.passed++;
      return true;
    }
  };
}

describe.each(nestPlatforms)('NestJS on $name', (platform) => {
  describe.each(stores)('on %s', (_storeName, makeStore) => {
    it('sets the headers on allowed and refused responses, and req.rateLimit for the handler', async () => {
      const options: TollgateModuleOptions = { limit: 2, window: '1m', store: makeStore(), name: 'site' };
      const metadata = {
        imports: [TollgateModule.forRoot(options)],
        controllers: [HelloController],
        providers: [globalGuard],
      };
      await withApp(platform, metadata, async (app) => {
        const first = await app.send('GET', '/hello');
        expect(first.status).toBe(200);
        expect(jsonBody(first)).toEqual({ remaining: 1, limiter: 'site' });
        expect(draft10(first, 'ratelimit')).toEqual({ '2-per-1m': { r: 1, t: 30 } });
        expect(draft10(first, 'ratelimit-policy')).toEqual({ '2-per-1m': { q: 2, w: 60 } });
        await app.send('GET', '/hello');
        const refused = await app.send('GET', '/hello');
        expect(refused.status).toBe(429);
        expect(refused.headers['content-type']).toBe('application/problem+json');
        expect(retryAfterSeconds(refused)).toBe(30);
        expect(draft10(refused, 'ratelimit')).toEqual({ '2-per-1m': { r: 0, t: 30 } });
        expect(jsonBody(refused)).toMatchObject({ type: QUOTA_EXCEEDED_TYPE, status: 429 });
        expect(Number(refused.headers['content-length'])).toBe(Buffer.byteLength(refused.body));
      });
    });

    it('releases a lease when the response finishes, and when the client hangs up', async () => {
      const held = new Held();
      const metadata = {
        imports: [TollgateModule.forRoot()],
        controllers: [concurrencyController(makeStore(), held)],
      };
      await withApp(platform, metadata, async (app) => {
        try {
          const first = send(app.server);
          await until(() => held.handled === 1, 'the first request is in its handler');
          const refused = await app.send('GET', '/quick');
          expect(refused.status).toBe(429);
          expect(refused.headers['content-type']).toBe('application/problem+json');
          expect(jsonBody(refused)).toMatchObject({ 'violated-policies': ['1-at-once'] });
          held.finishAll();
          expect(await first.status).toBe(200);
          await untilAdmitted(app); // its response finished: the slot is free again

          const gone = send(app.server);
          await until(() => held.handled === 2, 'the second request is in its handler');
          expect((await app.send('GET', '/quick')).status).toBe(429);
          gone.abort();
          await untilAdmitted(app); // the client left: its slot is free, though its handler still runs
          expect(held.finishers).toHaveLength(1);
        } finally {
          held.finishAll();
        }
      });
    });

    it('neither charges nor serves a request whose client hung up before the guard', async () => {
      const counts = { arrived: 0, passed: 0 };
      let handled = 0;
      @Controller()
      class SmsController {
        @Get()
        sms() {
          handled++;
          return 'sent';
        }
      }
      const metadata = {
        imports: [TollgateModule.forRoot({ limit: 3, window: '1h', store: makeStore() })],
        controllers: [SmsController],
        providers: [{ provide: APP_GUARD, useClass: hangUpGuard(counts) }, globalGuard],
      };
      await withApp(platform, metadata, async (app) => {
        const gone = [1, 2, 3].map(() => send(app.server, { 'x-hang-up': '1' }));
        await until(() => counts.arrived === 3, 'the requests reached the auth step');
        for (const request of gone) request.abort();
        await until(() => counts.passed === 3, 'they went past the auth step');
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) statuses.push(await send(app.server).status);
        expect(statuses).toEqual([200, 200, 200, 429]);
        expect(handled).toBe(3);
      });
    });
  });

  it('refuses with an HttpException that a custom exception filter sees and answers', async () => {
    seen.length = 0;
    const metadata = {
      imports: [TollgateModule.forRoot({ limit: 1, window: '1m', name: 'filtered' })],
      controllers: [HelloController],
      providers: [globalGuard, { provide: APP_FILTER, useClass: RecordingFilter }],
    };
    await withApp(platform, metadata, async (app) => {
      await app.send('GET', '/hello');
      const reshaped = await app.send('GET', '/hello');
      expect(reshaped.status).toBe(429);
      expect(jsonBody(reshaped)).toEqual({ error: 'slow down', limiter: 'filtered' });
      expect(reshaped.headers['content-type']).toMatch(/^application\/json/); // the filter's body, the filter's type
      expect(retryAfterSeconds(reshaped)).toBe(60); // the headers were set before the exception
      const exception = seen[0] as RateLimitException;
      expect(exception).toBeInstanceOf(HttpException);
      expect(exception).toBeInstanceOf(RateLimitException);
      expect(exception.getStatus()).toBe(429);
      expect(exception.getResponse()).toMatchObject({ type: QUOTA_EXCEEDED_TYPE, status: 429 });
      expect(exception.info?.limiter).toBe('filtered');
      expect(exception.info?.decision.allowed).toBe(false);
      // An answer, not a fault: no stack trace was captured for it, and the limit is as it was.
      expect(exception.stack).toMatch(/^RateLimitException: [^\n]*$/);
      expect(new Error('later').stack).toMatch(/\n\s+at /);

      // A filter that sends the exception's own body gets the limiter's answer, as it wrote it.
      const asIs = await app.send('GET', '/hello', { 'x-as-is': 'yes' });
      expect(asIs.headers['content-type']).toBe('application/problem+json');
      expect(jsonBody(asIs)).toEqual(exception.getResponse());

      // A cost no bucket can ever hold: a 403 of its own type.
      const tooBig = seen.length;
      expect((await app.send('GET', '/expensive')).status).toBe(403);
      expect((seen[tooBig] as RateLimitException).getStatus()).toBe(403);
    });
  });

  it("@RateLimit on a handler wins over its controller's; the controller's is one limiter for its handlers", async () => {
    const metadata = {
      imports: [TollgateModule.forRoot({ limit: 10, window: '1h', name: 'app-wide' })],
      controllers: [PrecedenceController, OpenController, HelloController],
      providers: [globalGuard],
    };
    await withApp(platform, metadata, async (app) => {
      const own = [];
      for (let i = 0; i < 4; i++) own.push((await app.send('GET', '/own')).status);
      expect(own).toEqual([200, 200, 200, 429]);
      const inherited = await app.send('GET', '/inherited');
      expect(draft10(inherited, 'ratelimit-policy')).toEqual({ '1-per-1h': { q: 1, w: 3600 } });
      // The controller's limiter, with its one token used by /inherited.
      expect((await app.send('GET', '/inherited-too')).status).toBe(429);
      // A route without a @RateLimit of its own or its controller's: the module's app-wide limiter.
      const hello = await app.send('GET', '/hello');
      expect(jsonBody(hello)).toEqual({ remaining: 9, limiter: 'app-wide' });
    });
  });

  it('gives each @RateLimit a limiter of its own, even where two were given one options object', async () => {
    const metadata = {
      imports: [TollgateModule.forRoot()],
      controllers: [SharedOptionsController],
      providers: [globalGuard],
    };
    await withApp(platform, metadata, async (app) => {
      const statuses = [];
      for (const path of ['/shared/a', '/shared/b', '/shared/a', '/shared/b'])
        statuses.push((await app.send('GET', path)).status);
      expect(statuses).toEqual([200, 200, 429, 429]);
    });
  });

  it('@SkipRateLimit lets a handler or a whole controller through, unless a handler says otherwise', async () => {
    const metadata = {
      imports: [TollgateModule.forRoot({ limit: 1, window: '1h' })],
      controllers: [PrecedenceController, OpenController],
      providers: [globalGuard],
    };
    await withApp(platform, metadata, async (app) => {
      for (const path of ['/skipped', '/open', '/skipped', '/open']) {
        const response = await app.send('GET', path);
        expect([response.status, response.headers.ratelimit]).toEqual([200, undefined]);
      }
      expect((await app.send('GET', '/open/but-this')).status).toBe(200);
      expect((await app.send('GET', '/open/but-this')).status).toBe(429);
    });
  });

  it('forRootAsync builds the options from injected providers', async () => {
    const metadata = {
      imports: [
        TollgateModule.forRootAsync({
          imports: [LimitsModule],
          inject: [LIMITS],
          useFactory: async (limits: { perMinute: number }) => ({ limit: limits.perMinute, window: '1m' }),
        }),
      ],
      controllers: [HelloController],
      providers: [globalGuard],
    };
    await withApp(platform, metadata, async (app) => {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await app.send('GET', '/hello')).status);
      expect(statuses).toEqual([200, 200, 429]);
    });
  });

  it('forRootAsync takes the options a class makes, provided by the module (useClass) or elsewhere (useExisting)', async () => {
    class LimitsConfig implements TollgateOptionsFactory {
      constructor(private readonly limits: { perMinute: number }) {}
      createTollgateOptions() {
        return { limit: this.limits.perMinute, window: '1m' };
      }
    }
    // Decorated by calls, as the package's own classes are: Biome parses no parameter decorators.
    Injectable()(LimitsConfig);
    Inject(LIMITS)(LimitsConfig, undefined, 0);
    @Module({ imports: [LimitsModule], providers: [LimitsConfig], exports: [LimitsConfig] })
    class ConfigsModule {}
    for (const tollgate of [
      TollgateModule.forRootAsync({ imports: [LimitsModule], useClass: LimitsConfig }),
      TollgateModule.forRootAsync({ imports: [ConfigsModule], useExisting: LimitsConfig }),
    ]) {
      const metadata = { imports: [tollgate], controllers: [HelloController], providers: [globalGuard] };
      await withApp(platform, metadata, async (app) => {
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push((await app.send('GET', '/hello')).status);
        expect(statuses).toEqual([200, 200, 429]);
      });
    }
  });

  it('an injected TollgateLimiters resets a key in every limiter', async () => {
    @Controller()
    class AdminController {
      @Inject(TollgateLimiters) private readonly limiters!: TollgateLimiters;

      @SkipRateLimit()
      @Post('unblock')
      async unblock() {
        await this.limiters.resetKey('ip:127.0.0.1');
        return 'unblocked';
      }
    }
    const metadata = {
      imports: [TollgateModule.forRoot({ limit: 1, window: '1h' })],
      controllers: [AdminController, PrecedenceController],
      providers: [globalGuard],
    };
    await withApp(platform, metadata, async (app) => {
      await app.send('GET', '/inherited');
      expect((await app.send('GET', '/inherited')).status).toBe(429);
      expect((await app.send('POST', '/unblock')).status).toBe(201);
      expect((await app.send('GET', '/inherited')).status).toBe(200);
    });
  });

  it('an injected TollgateLimiters sets a client’s override in every limiter with overrides', async () => {
    @Controller()
    class AdminController {
      @Inject(TollgateLimiters) private readonly limiters!: TollgateLimiters;

      @SkipRateLimit()
      @Post('raise')
      async raise() {
        await this.limiters.setOverride('ip:127.0.0.1', 3);
        return (await this.limiters.getOverride('ip:127.0.0.1'))?.policies[0]?.limit;
      }
    }
    const metadata = {
      imports: [
        TollgateModule.forRoot({ limit: 1, window: '1h', algorithm: 'fixed-window', overrides: true }),
      ],
      controllers: [AdminController, PrecedenceController],
      providers: [globalGuard],
    };
    await withApp(platform, metadata, async (app) => {
      await app.send('GET', '/inherited');
      expect((await app.send('GET', '/inherited')).status).toBe(429);
      expect((await app.send('POST', '/raise')).body).toBe('3');
      const raised = await app.send('GET', '/inherited');
      expect([raised.status, raised.headers['ratelimit-policy']]).toEqual([200, '"1-per-1h";q=3;w=3600']);
    });
  });

  describe('with Redis down', () => {
    let server: RedisProcess;
    beforeAll(async () => {
      server = await startRedisServer();
    });
    afterAll(() => server.stop());

    it('answers from the insurance limiter, with headers, and fails no request', async () => {
      const client = await connectRedis(server.url);
      await server.kill();
      const logged: string[] = [];
      const logger = {
        warn: (line: string) => logged.push(line),
        error: (line: string) => logged.push(line),
      };
      const store = new RedisStore({ client, prefix: uniquePrefix('nestjs-outage'), logger });
      const metadata = {
        imports: [TollgateModule.forRoot({ limit: 2, window: '1h', store, logger })],
        controllers: [HelloController],
        providers: [globalGuard],
      };
      try {
        await withApp(platform, metadata, async (app) => {
          const answers = [];
          for (let i = 0; i < 3; i++) answers.push(await app.send('GET', '/hello'));
          expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
          for (const answer of answers) expect(answer.headers.ratelimit).toBeDefined();
          expect(logged.filter((line) => line.startsWith('[TOLLGATE_STORE_UNAVAILABLE]'))).toHaveLength(1);
        });
      } finally {
        client.disconnect();
        server = await startRedisServer([], server.port); // for afterAll to stop
      }
    });
  });

  describe('bad options stop the app at startup', () => {
    it("in the module's options", async () => {
      await expect(
        startNestApp(platform, { imports: [TollgateModule.forRoot({ window: 'soon' })] }),
      ).rejects.toThrow(/^@tollgate\/nestjs: window/);
      await expect(
        startNestApp(platform, {
          imports: [TollgateModule.forRootAsync({ useFactory: async () => ({ limit: -1 }) })],
        }),
      ).rejects.toThrow(TypeError);
      await expect(
        startNestApp(platform, { imports: [TollgateModule.forRoot({ handler: () => {} } as never)] }),
      ).rejects.toThrow(/handler is no option here/);
      class NoFactory {}
      await expect(
        startNestApp(platform, {
          imports: [TollgateModule.forRootAsync({ useClass: NoFactory as never })],
        }),
      ).rejects.toThrow(/^@tollgate\/nestjs: NoFactory has no createTollgateOptions\(\) method/);
    });

    it('in forRootAsync without exactly one source of options', () => {
      const factory = () => ({ limit: 1 });
      class Config {
        createTollgateOptions() {
          return { limit: 1 };
        }
      }
      for (const options of [{}, { useFactory: factory, useClass: Config }, { useFactory: 'options' }])
        expect(() => TollgateModule.forRootAsync(options as never)).toThrow(
          /^@tollgate\/nestjs: forRootAsync takes exactly one of useFactory, useClass or useExisting/,
        );
    });

    it('in a @RateLimit, naming the handler', async () => {
      @Controller()
      class BadController {
        @RateLimit({ window: 'soon' })
        @Get()
        bad() {}
      }
      await expect(
        startNestApp(platform, { imports: [TollgateModule.forRoot()], controllers: [BadController] }),
      ).rejects.toThrow(/^@tollgate\/nestjs \(BadController\.bad\): window/);
    });
  });
});
