/**
 * Next.js's proxy (formerly middleware), on the Node.js runtime: the site-wide limit, checked before the
 * route runs. A refused request gets the 429 from here; an allowed one goes on with the headers.
 */
import { rateLimit } from '@tollgate/fetch';
import { type NextRequest, NextResponse } from 'next/server';
import { siteLimit } from './limits';

const site = rateLimit(siteLimit);

export async function proxy(request: NextRequest) {
  const result = await site.check(request);
  if (!result.allowed) return result.response;
  return result.apply(NextResponse.next());
}

export const config = {
  // Every API route but /api/hello, which checks siteLimit itself beside its own limit: Next.js puts the
  // proxy's RateLimit headers on the response in place of the route's, so one request must be checked in
  // one place for its headers to tell all of its limits.
  matcher: '/api/((?!hello$).*)',
};
