/**
 * What the routes of the test apps answer, as the request asks in its headers, the same in every
 * framework: a status (`x-status: 401`), an error thrown by the handler (`x-throw: yes`), the request's
 * rate-limit info as JSON (`x-echo: <property>`), after resetting its key (`x-reset: yes`).
 */
import type { RateLimitInfo } from '@tollgate/core';

/** The `x-id` of every request a route's handler ran for: a request that must not be served is not here. */
export const servedIds = new Set<string>();

/** The answer to send. Throws when the request asks the handler to fail. */
export async function testAnswer(
  header: (name: string) => string | undefined,
  property: (name: string) => unknown,
): Promise<{ status: number; body: string }> {
  const id = header('x-id');
  if (id !== undefined) servedIds.add(id);
  if (header('x-throw') === 'yes') throw new Error('the handler failed');
  const echo = header('x-echo');
  if (header('x-reset') === 'yes') await (property(echo ?? 'rateLimit') as RateLimitInfo).resetKey();
  const body = echo === undefined ? 'ok' : JSON.stringify(property(echo) ?? null);
  return { status: Number(header('x-status') ?? 200), body };
}
