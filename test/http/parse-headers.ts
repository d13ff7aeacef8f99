/** Reads rate-limit headers the way a client would: with a structured-field parser, not string matching. */
import { parseDictionary, parseList } from 'structured-headers';
import { expect } from 'vitest';
import type { TestResponse } from './app-spec.js';

/** A draft-10 list (`RateLimit` or `RateLimit-Policy`) as `{ policyName: { param: value } }`. */
export function draft10(
  response: TestResponse,
  field: 'ratelimit' | 'ratelimit-policy',
): Record<string, Record<string, unknown>> {
  const value = response.headers[field];
  expect(value, `${field} header`).toBeTypeOf('string');
  const members: Record<string, Record<string, unknown>> = {};
  for (const [name, params] of parseList(value as string)) {
    expect(name, 'policy names are sf-strings').toBeTypeOf('string');
    members[name as string] = Object.fromEntries(params);
  }
  return members;
}

/** A draft-7 `RateLimit` dictionary as `{ limit, remaining, reset }`. */
export function draft7(response: TestResponse): Record<string, unknown> {
  const value = response.headers.ratelimit;
  expect(value, 'RateLimit header').toBeTypeOf('string');
  return Object.fromEntries([...parseDictionary(value as string)].map(([key, [item]]) => [key, item]));
}

/** `Retry-After` in seconds (delay-seconds form), or undefined. */
export function retryAfterSeconds(response: TestResponse): number | undefined {
  const value = response.headers['retry-after'];
  if (value === undefined) return undefined;
  expect(value).toMatch(/^\d+$/);
  return Number(value);
}

/** The JSON body of a response. */
export function jsonBody(response: TestResponse): Record<string, unknown> {
  return JSON.parse(response.body) as Record<string, unknown>;
}
