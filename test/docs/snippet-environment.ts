/** What the docs' snippets are checked with besides the workspace's packages: other modules, and their types. */

/**
 * Modules the snippets import that `test/` does not install under that name, and where they are: node-redis
 * is installed as `redis5` (the docs' `redis`), the OpenTelemetry API and SDK by `@tollgate/otel`.
 */
export const INSTALLED_ELSEWHERE: Readonly<Record<string, { readonly as: string; readonly from: string }>> = {
  redis: { as: 'redis5', from: 'test' },
  '@opentelemetry/api': { as: '@opentelemetry/api', from: 'packages/otel' },
  '@opentelemetry/sdk-metrics': { as: '@opentelemetry/sdk-metrics', from: 'packages/otel' },
};

/**
 * The few modules a snippet imports that nothing in the workspace installs: the part of their API the
 * docs use, declared as their own docs give it, so the snippet's use of Tollgate around them is checked.
 * Another library's API for its own sake (a migration guide's "before") is not: its block is marked
 * `not-checked`.
 */
export const UNINSTALLED_MODULES = `
declare module '@nestjs/graphql' {
  interface FieldOptions { nullable?: boolean }
  export function Resolver(): ClassDecorator;
  export function Query(returns: () => unknown, options?: FieldOptions): MethodDecorator;
  export function Mutation(returns: () => unknown, options?: FieldOptions): MethodDecorator;
}
declare module '@nestjs/websockets' {
  export interface OnGatewayConnection {
    handleConnection(client: any, ...args: any[]): any;
  }
  export function WebSocketGateway(options?: { path?: string }): ClassDecorator;
  export function SubscribeMessage(message: string): MethodDecorator;
}
declare module '@nestjs/microservices' {
  export function MessagePattern(pattern: unknown): MethodDecorator;
  export function EventPattern(pattern: unknown): MethodDecorator;
}
declare module '@nestjs/config' {
  export class ConfigModule {}
  export class ConfigService {
    get<T = any>(propertyPath: string, defaultValue: T): T;
    getOrThrow<T = any>(propertyPath: string): T;
  }
}
declare module '@opentelemetry/exporter-metrics-otlp-http' {
  import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
  export const OTLPMetricExporter: new (config?: { url?: string }) => PushMetricExporter;
}
declare module '@sveltejs/kit' {
  export interface RequestEvent {
    readonly request: Request;
    getClientAddress(): string;
  }
  export type Handle = (input: {
    event: RequestEvent;
    resolve(event: RequestEvent): Promise<Response>;
  }) => Promise<Response>;
}
`;

/**
 * What an app's other libraries add to the frameworks' types, as far as the docs use it: `req.user` from
 * an authentication library (Passport on Express; @fastify/passport or @fastify/jwt on Fastify), and
 * `ctx.request.body` from a body parser (@koa/bodyparser; read with a cast). In the snippets' Programs only, so the
 * rest of `test/` keeps the frameworks' own types.
 */
export const APP_LIBRARY_AUGMENTATIONS = `
import 'express';
import 'fastify';
import 'koa';

declare global {
  namespace Express {
    interface User { id: string; plan: 'free' | 'pro' }
    interface Request { user?: User }
  }
}
declare module 'fastify' {
  interface FastifyRequest { user?: { id: string; plan: 'free' | 'pro' } }
}
declare module 'koa' {
  interface Request { body?: unknown }
}
`;
