/**
 * GET /api/hello: 5 requests a minute per client, within the site-wide 10, both checked here (proxy.ts
 * leaves this route out), so every answer's RateLimit header lists both and a 429 names one of them.
 */
import { withRateLimit } from '@tollgate/fetch';
import { clientIp } from '../../../client-ip';
import { siteLimit } from '../../../limits';
import { store } from '../../../store';

const hello = withRateLimit(
  (request: Request) => Response.json({ hello: new URL(request.url).searchParams.get('name') ?? 'world' }),
  { name: 'hello', limit: 5, window: '1m', store, ip: clientIp },
);

export const GET = withRateLimit(hello, siteLimit);
