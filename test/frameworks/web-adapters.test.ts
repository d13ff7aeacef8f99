/** The adapter scenario table × the Web-standard drivers (Hono, @tollgate/fetch) × both stores. */
import { runScenarioTable } from './scenario-table.js';
import { webDrivers } from './web-drivers.js';

/**
 * Scenarios that cannot map onto a Web-standard adapter, each with the reason. Everything else runs.
 */
const NOT_APPLICABLE: Readonly<Record<string, string>> = {
  // The scenario also expects TOLLGATE_PERMISSIVE_TRUST_PROXY, which Express, Fastify and Koa raise when
  // their trust-proxy setting trusts every hop. Hono and the Fetch API have no such setting: the app's
  // own `ip` function reads X-Forwarded-For, and no adapter can tell from a function whether it trusts
  // every hop. The rest of the scenario (a bucket per forwarded client, no UNTRUSTED warning) is in
  // fetch.test.ts and hono.test.ts.
  'with trusted proxies, each forwarded client has its own bucket': 'no trust-proxy setting to warn about',
};

await runScenarioTable(webDrivers, 'web-adapters', NOT_APPLICABLE);
