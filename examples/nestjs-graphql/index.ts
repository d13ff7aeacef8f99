/** Starts the NestJS GraphQL and WebSocket example on PORT (default 3008). */
import { openStore } from '@tollgate/example-support/store';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3008);
const shared = openStore(process.env.REDIS_URL, 'tollgate:example-nestjs-graphql:');
const app = await createApp(shared.store);

try {
  await app.listen(port, '127.0.0.1');
} catch (error) {
  console.error(`cannot listen on 127.0.0.1:${port}: ${(error as Error).message}`);
  await shared.close();
  process.exit(1);
}

const url = `http://127.0.0.1:${port}`;
const query = (text: string) =>
  `curl -i -H 'content-type: application/json' -d '${JSON.stringify({ query: text })}' ${url}/graphql`;
console.log(`NestJS GraphQL example on ${url}, store: ${shared.description}\n`);
console.log(
  [
    'The app-wide limit, 30 operations a minute per IP: see the RateLimit and RateLimit-Policy headers',
    `  ${query('{ books }')}`,
    'The recommendations limit, 5 a minute: the 6th is a GraphQL error, extensions.code TOLLGATE_RATE_LIMITED',
    `  for i in 1 2 3 4 5 6; do ${query('{ recommendations books }')}; echo; done`,
    'The review limit, 2 a minute per user (header x-user)',
    `  ${query('mutation { addReview }').replace('curl -i', "curl -i -H 'x-user: ann'")}`,
    'Chat over WebSocket, 5 messages every 10 s: the 6th gets an exception event',
    `  node -e "const ws = new WebSocket('ws://127.0.0.1:${port}/chat'); ws.onopen = () => { for (let i = 0; i < 6; i++) ws.send(JSON.stringify({ event: 'chat', data: 'hi' })); }; ws.onmessage = (m) => console.log(m.data); setTimeout(() => ws.close(), 500);"`,
    'Not limited: no RateLimit headers at all',
    `  ${query('{ health }')}`,
  ].join('\n'),
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    // A second Ctrl-C means "now": do not wait for slow requests.
    if (stopping) process.exit(1);
    stopping = true;
    console.log(`\n${signal}: closing the server and the store`);
    await app.close();
    await shared.close();
  });
}
