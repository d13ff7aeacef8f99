/**
 * The site-wide limit, 10 requests a minute per client across the API. proxy.ts checks it for every API
 * route but those that check it themselves (app/api/hello/route.ts): both use these options, so one
 * name and one store, and each client has one bucket whichever of them charges it.
 */
import type { FetchRateLimitOptions } from '@tollgate/fetch';
import { clientIp } from './client-ip';
import { store } from './store';

export const siteLimit: FetchRateLimitOptions = {
  name: 'site',
  limit: 10,
  window: '1m',
  store,
  ip: clientIp,
};
