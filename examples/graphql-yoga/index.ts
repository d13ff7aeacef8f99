/** Starts the GraphQL Yoga example on PORT (default 3007): in memory, or on Redis when REDIS_URL is set. */
import { createServer } from 'node:http';
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3007);
const shared = openStore(process.env.REDIS_URL, 'tollgate:example-graphql-yoga:');
const server = createServer(createApp(shared.store));

await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${port}/graphql`;
const curl = (query: string) =>
  `curl -i ${url} -H 'content-type: application/json' -H 'x-api-key: demo-key-1' -d '${JSON.stringify({ query })}'`;
console.log(`GraphQL Yoga example on ${url}, store: ${shared.description}
300 cost points a minute per API key. Each answer's extensions.cost says what the query was estimated
to cost (requested), what it cost (actual) and what is left (throttleStatus).

A query of 31 points estimated (1 + 5 products × (1 + 5 reviews)), charged 16 (5 products of 2 reviews):
  ${curl('{ products(first: 5) { name reviews(first: 5) { stars } } }')}

A fan-out, 100 products × 100 reviews (10,101 points), refused with 403 before anything runs:
  ${curl('{ products(first: 100) { name reviews(first: 100) { stars } } }')}

Recommendations cost 5 each (193 estimated, 133 charged): the second time, a 429 with Retry-After:
  ${curl('{ products(first: 12) { recommendations { name } } }')}
`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(() => void shared.close());
  });
}
