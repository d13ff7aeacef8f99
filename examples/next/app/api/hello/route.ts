/** GET /api/hello: a route handler behind `withRateLimit`, 5 requests a minute per client IP. */
import { withRateLimit } from '@tollgate/fetch';
import { clientIp } from '../../../client-ip';
import { store } from '../../../store';

export const GET = withRateLimit(
  (request: Request) => {
    const name = new URL(request.url).searchParams.get('name') ?? 'world';
    return Response.json({ hello: name });
  },
  { name: 'hello', limit: 5, window: '1m', store, ip: clientIp },
);
