/**
 * Reads rate-limit headers the way a client would: with structured-field parsers, not string matching.
 * Every field is read by two independent RFC 9651 parsers (structured-headers and
 * structured-field-values), which must agree.
 */
import { decodeDict, decodeItem, decodeList } from 'structured-field-values';
import { parseDictionary, parseItem, parseList } from 'structured-headers';
import { expect } from 'vitest';
import type { TestResponse } from './app-spec.js';

type Members = Record<string, Record<string, unknown>>;

/** The rate-limit fields a response may carry, by lower-case name, with how each is structured. */
const FIELDS = {
  ratelimit: 'list-or-dictionary',
  'ratelimit-policy': 'list',
  'ratelimit-limit': 'integer',
  'ratelimit-remaining': 'integer',
  'ratelimit-reset': 'integer',
  'retry-after': 'integer',
} as const;

/** A list field as `{ member: { param: value } }`, read by both parsers alike. */
function listMembers(value: string, field: string): Members {
  expect(value, `${field}: numbers are sf-integers`).not.toMatch(/=-?\d+\./);
  const members: Members = {};
  for (const [name, params] of parseList(value)) {
    expect(Array.isArray(name), `${field}: no inner lists`).toBe(false);
    members[String(name)] = Object.fromEntries(params);
  }
  const again: Members = {};
  for (const member of decodeList(value)) again[String(member.value)] = { ...(member.params ?? {}) };
  expect(again, `${field}: both parsers read the same`).toEqual(members);
  return members;
}

/** A dictionary field of bare items as an object, read by both parsers alike. */
function dictionary(value: string, field: string): Record<string, unknown> {
  expect(value, `${field}: numbers are sf-integers`).not.toMatch(/=-?\d+\./);
  const fields = Object.fromEntries([...parseDictionary(value)].map(([key, [item]]) => [key, item]));
  const again = Object.fromEntries(Object.entries(decodeDict(value)).map(([key, item]) => [key, item.value]));
  expect(again, `${field}: both parsers read the same`).toEqual(fields);
  return fields;
}

/** A non-negative sf-integer item field, read by both parsers alike. */
function integer(value: string, field: string): number {
  expect(value, `${field} is delay-seconds / an sf-integer`).toMatch(/^\d+$/);
  const [item] = parseItem(value);
  expect(decodeItem(value).value, `${field}: both parsers read the same`).toBe(item);
  return item as number;
}

/**
 * Parses every rate-limit field the response carries with both parsers; fails on any that is malformed
 * or read differently. Returns the fields by name.
 */
export function parseRateLimitFields(response: TestResponse): Record<string, unknown> {
  const parsed: Record<string, unknown> = {};
  for (const [field, shape] of Object.entries(FIELDS)) {
    const value = response.headers[field];
    if (value === undefined) continue;
    if (shape === 'integer') parsed[field] = integer(value, field);
    else if (shape === 'list') parsed[field] = listMembers(value, field);
    // `RateLimit` is a list in draft-10/11 (members are quoted names) and a dictionary in draft-7.
    else parsed[field] = value.startsWith('"') ? listMembers(value, field) : dictionary(value, field);
  }
  return parsed;
}

/** A draft-10/11 list (`RateLimit` or `RateLimit-Policy`) as `{ policyName: { param: value } }`. */
export function draft10(response: TestResponse, field: 'ratelimit' | 'ratelimit-policy'): Members {
  const value = response.headers[field];
  expect(value, `${field} header`).toBeTypeOf('string');
  parseRateLimitFields(response);
  const members = listMembers(value as string, field);
  for (const name of Object.keys(members))
    expect(value, 'policy names are sf-strings').toContain(`"${name}"`);
  return members;
}

/** A draft-7 `RateLimit` dictionary as `{ limit, remaining, reset }`. */
export function draft7(response: TestResponse): Record<string, unknown> {
  const value = response.headers.ratelimit;
  expect(value, 'RateLimit header').toBeTypeOf('string');
  parseRateLimitFields(response);
  return dictionary(value as string, 'ratelimit');
}

/** `Retry-After` in seconds (delay-seconds form), or undefined. */
export function retryAfterSeconds(response: TestResponse): number | undefined {
  const value = response.headers['retry-after'];
  return value === undefined ? undefined : integer(value, 'retry-after');
}

/** The JSON body of a response. */
export function jsonBody(response: TestResponse): Record<string, unknown> {
  return JSON.parse(response.body) as Record<string, unknown>;
}
