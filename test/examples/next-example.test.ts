/**
 * examples/next: its App Router route handler, `GET /api/hello`, called as Next.js calls it (a `Request`
 * in, a `Response` out) without booting Next.js. next-app.test.ts builds the whole app with `next build`
 * and serves it with `next start`, proxy.ts included.
 */
import { ClientAddressError } from '@tollgate/core';
import { GET } from '@tollgate/example-next/hello-route';
import { describe, expect, it } from 'vitest';

const hello = (headers: Record<string, string>, query = '') =>
  GET(new Request(`http://localhost:3000/api/hello${query}`, { headers }));

/** As a request reaches `next start` from the one proxy in front, which appended the client's address. */
const from = (client: string) => ({ 'x-forwarded-for': client });

describe('examples/next GET /api/hello', () => {
  it('answers 5 requests a minute per client IP within the site-wide 10, then 429 with Retry-After', async () => {
    const client = from('203.0.113.10');
    const first = await hello(client, '?name=ada');
    expect(await first.json()).toEqual({ hello: 'ada' });
    expect(first.headers.get('ratelimit')).toBe('"10-per-1m";r=9;t=6, "5-per-1m";r=4;t=12');
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await hello(client)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    const limited = await hello(client);
    expect(limited.headers.get('retry-after')).toBe('12');
    expect(limited.headers.get('content-type')).toBe('application/problem+json');
    expect(await limited.json()).toMatchObject({ 'violated-policies': ['5-per-1m'] });
    expect((await hello(from('203.0.113.11'))).status).toBe(200); // another client
  });

  it("keys by the last X-Forwarded-For entry, the one the app's own proxy appended", async () => {
    const spoofing = (first: string) => ({ 'x-forwarded-for': `${first}, 198.51.100.20` });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await hello(spoofing(`192.0.2.${i}`))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]); // a new first entry buys nothing
  });

  it('refuses a request with no address at all rather than pool it with others', async () => {
    await expect(hello({})).rejects.toBeInstanceOf(ClientAddressError);
  });
});
