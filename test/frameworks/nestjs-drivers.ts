/**
 * `FrameworkDriver`s for Nest on Express and on Fastify: each builds an `AppSpec` the Nest way. The
 * app-wide limiter is the module's options under a global `TollgateGuard` (after an authentication
 * guard that puts the `x-user` on `req.user`); a route's limiter is `@RateLimit` on its handler; `limit:
 * false` is `@SkipRateLimit()`; `trustProxy` is the platform's own setting. A spec without an app-wide
 * limiter guards only its routes that have one, with `@UseGuards(TollgateGuard)`.
 */
import {
  type CanActivate,
  Controller,
  type ExecutionContext,
  Get,
  Post,
  Req,
  Res,
  type Type,
  UseGuards,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { RateLimit, SkipRateLimit, TollgateGuard, TollgateModule } from '@tollgate/nestjs';
import type { AppSpec, FrameworkDriver, RouteSpec } from './app-spec.js';
import { type NestPlatform, nestPlatforms, startNestApp } from './nestjs-apps.js';
import { testAnswer } from './test-answer.js';

type AnyRequest = { headers: Record<string, string | string[] | undefined> } & Record<string, unknown>;

function firstHeader(request: AnyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The app's authentication: an app-wide guard before Tollgate's, as Nest apps order them. */
class AuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AnyRequest>();
    const id = firstHeader(request, 'x-user');
    request.user = id ? { id } : undefined;
    return true;
  }
}

/** A controller with a handler per route (and `GET /a`, `GET /b`), decorated as the spec says. */
function controllerFor(spec: AppSpec, platform: NestPlatform): Type {
  class ScenarioController {}
  const prototype = ScenarioController.prototype as unknown as Record<string, unknown>;
  const routes: RouteSpec[] = [
    ...(spec.routes ?? []),
    { method: 'GET', path: '/a' },
    { method: 'GET', path: '/b' },
  ];
  routes.forEach((route, index) => {
    const name = `route${index}`;
    prototype[name] = async (request: AnyRequest, response: unknown) => {
      const { status, body } = await testAnswer(
        (header) => firstHeader(request, header),
        (property) => request[property],
      );
      platform.answer(response, status, body);
    };
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name) as PropertyDescriptor;
    const decorators: MethodDecorator[] = [(route.method === 'GET' ? Get : Post)(route.path)];
    if (route.limit === false) decorators.push(SkipRateLimit());
    else if (route.limit) decorators.push(RateLimit(route.limit));
    if (route.limit && !spec.global) decorators.push(UseGuards(TollgateGuard));
    for (const decorate of decorators) decorate(prototype, name, descriptor);
    Req()(prototype, name, 0);
    Res()(prototype, name, 1);
  });
  Controller()(ScenarioController);
  return ScenarioController;
}

function nestDriver(platform: NestPlatform): FrameworkDriver {
  return {
    name: `NestJS on ${platform.name}`,
    reader: {
      header: (request: AnyRequest, name) => firstHeader(request, name),
      userId: (request: AnyRequest) => (request.user as { id: string } | undefined)?.id,
    },
    async build(spec) {
      const guards = spec.global ? [AuthGuard, TollgateGuard] : [AuthGuard];
      const app = await startNestApp(
        platform,
        {
          imports: [TollgateModule.forRoot(spec.global ?? {})],
          controllers: [controllerFor(spec, platform)],
          providers: guards.map((useClass) => ({ provide: APP_GUARD, useClass })),
        },
        { trustProxy: spec.trustProxy ?? false },
      );
      return { send: app.send, close: app.close };
    },
  };
}

export const nestDrivers: readonly FrameworkDriver[] = nestPlatforms.map(nestDriver);
