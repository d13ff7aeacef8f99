/**
 * examples/next as users serve it: `next build` once, then two `next start` processes sharing one Redis,
 * reached over HTTP as a browser reaches them. The app is a copy of the example that installs
 * @tollgate/core and @tollgate/fetch as they are published, with the READMEs' Next.js quick starts added
 * as routes of their own, and no tsconfig.json: `next build` writes its own (`strict: false`).
 *
 * Regression tests for issue 39, "Next.js as a user serves it": the README's route failed every request
 * on `next start` with a warning naming Express's setting, `if (!result.allowed) return result.response`
 * failed `next build` under `strict: false`, and a limiter in proxy.ts plus one in the route answered a
 * 429 whose body named a policy its headers did not list.
 */
import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { draft10 } from '../frameworks/parse-headers.js';
import { assembleNextApp, type NextAppCopy, ROOT } from './next-app/assemble.js';
import { type NextServer, startNext } from './next-app/next-server.js';
import {
  codeAfterName,
  exampleFileAsShown,
  type NextBlock,
  nextBlocksOf,
  type QuickStartKind,
} from './next-app/readme-blocks.js';

const READMES = ['README.md', 'packages/fetch/README.md'] as const;
const blocks: NextBlock[] = READMES.flatMap(nextBlocksOf);
const quickStarts = blocks
  .filter((block): block is NextBlock & { kind: QuickStartKind } => block.kind !== 'example')
  .map((block, index) => ({ ...block, route: `readme/${index}` }));

let app: NextAppCopy | undefined;
const servers: NextServer[] = [];

beforeAll(async () => {
  app = await assembleNextApp(quickStarts.map(({ route, code }) => ({ path: route, code })));
  await app.build();
  const env = { REDIS_URL: inject('redisUrl') };
  for (const started of await Promise.allSettled([startNext(app.dir, env), startNext(app.dir, env)])) {
    if (started.status === 'fulfilled') servers.push(started.value);
    else throw started.reason;
  }
}, 300_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await app?.remove();
}, 60_000);

/** This run's own clients, so that runs sharing one Redis never share a bucket: 198.18.x.y (RFC 2544). */
const RUN = randomInt(0, 256);
let clients = 0;
const newClient = () => `198.18.${RUN}.${++clients}`;

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** GET `path` from server `index`, with `headers`, read to the end. */
async function get(index: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${(servers[index] as NextServer).url}${path}`, { headers });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: await response.text(),
  };
}

/** As the client's request reaches `next start` from one reverse proxy that appends the address it saw. */
const viaProxy = (client: string, written?: string) => ({
  'x-forwarded-for': written === undefined ? client : `${written}, ${client}`,
});

const statuses = (answers: readonly Answer[]) => answers.map((answer) => answer.status);
const count = (answers: readonly Answer[], status: number) =>
  answers.filter((answer) => answer.status === status).length;

describe('examples/next on two next start processes sharing one Redis', () => {
  it('admits exactly the limit of requests split across both processes', async () => {
    const hello = newClient();
    const site = newClient();
    const burst = (path: string, client: string, n: number) =>
      Promise.all(Array.from({ length: n }, (_, i) => get(i % 2, path, viaProxy(client))));
    // GET /api/hello: 5 a minute, within the site-wide 10 (both checked by the route).
    const helloAnswers = await burst('/api/hello', hello, 16);
    expect([count(helloAnswers, 200), count(helloAnswers, 429)]).toEqual([5, 11]);
    // GET /api/ip: the site-wide 10, checked by proxy.ts.
    const siteAnswers = await burst('/api/ip', site, 24);
    expect([count(siteAnswers, 200), count(siteAnswers, 429)]).toEqual([10, 14]);
  });

  it('answers with both policies in its headers, and a 429 whose body names one of them', async () => {
    const client = viaProxy(newClient());
    const first = await get(0, '/api/hello?name=ada', client);
    expect([first.status, JSON.parse(first.body)]).toEqual([200, { hello: 'ada' }]);
    expect(draft10(first, 'ratelimit-policy')).toEqual({
      '10-per-1m': { q: 10, w: 60 },
      '5-per-1m': { q: 5, w: 60 },
    });
    expect(draft10(first, 'ratelimit')).toMatchObject({ '10-per-1m': { r: 9 }, '5-per-1m': { r: 4 } });
    const more = [];
    for (let i = 0; i < 5; i++) more.push(await get(i % 2, '/api/hello', client));
    expect(statuses(more)).toEqual([200, 200, 200, 200, 429]);
    const limited = more[4] as Answer;
    expect(limited.headers['content-type']).toBe('application/problem+json');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const problem = JSON.parse(limited.body) as { status: number; 'violated-policies': string[] };
    expect(problem).toMatchObject({ status: 429, 'violated-policies': ['5-per-1m'] });
    const fields = draft10(limited, 'ratelimit');
    expect(fields).toMatchObject({ '10-per-1m': { r: 4 }, '5-per-1m': { r: 0 } });
    for (const policy of problem['violated-policies']) expect(Object.keys(fields)).toContain(policy);
  });

  it("limits in proxy.ts, and the route that checks the proxy's limit itself charges the same bucket", async () => {
    const client = viaProxy(newClient());
    const answers = [];
    for (let i = 0; i < 11; i++) answers.push(await get(i % 2, '/api/ip', client));
    expect(statuses(answers)).toEqual([...Array(10).fill(200), 429]);
    expect(draft10(answers[0] as Answer, 'ratelimit')).toMatchObject({ '10-per-1m': { r: 9 } });
    const refused = answers[10] as Answer;
    expect(refused.headers['content-type']).toBe('application/problem+json');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(refused.body)).toMatchObject({ status: 429, 'violated-policies': ['10-per-1m'] });
    expect(Object.keys(draft10(refused, 'ratelimit'))).toEqual(['10-per-1m']);
    // /api/hello is left out of the proxy's matcher and checks the site-wide limit itself: already spent.
    const hello = await get(0, '/api/hello', client);
    expect([hello.status, JSON.parse(hello.body)['violated-policies']]).toEqual([429, ['10-per-1m']]);
  });

  it('takes the X-Forwarded-For entry next start was given last: the socket, a proxy, or a client', async () => {
    const ipOf = async (headers: Record<string, string>) =>
      JSON.parse((await get(1, '/api/ip', headers)).body);
    // Sent without the header, the request gets the socket's address from Next.js itself.
    expect(await ipOf({})).toEqual({ ip: '127.0.0.1' });
    // Behind a proxy, the entry it appended, whatever the client wrote before it.
    const client = newClient();
    expect(await ipOf(viaProxy(client, '203.0.113.66'))).toEqual({ ip: client });
    // With no proxy in front, a client's own header goes through as it wrote it: why that is unsafe.
    expect(await ipOf({ 'x-forwarded-for': '203.0.113.77' })).toEqual({ ip: '203.0.113.77' });
  });
});

describe("the READMEs' Next.js files, as written", () => {
  it('include both quick starts in the root README and in the fetch README', () => {
    for (const readme of READMES) {
      const kinds = quickStarts.filter((block) => block.where.startsWith(`${readme}:`)).map((b) => b.kind);
      expect(new Set(kinds), readme).toEqual(new Set(['vercel', 'behind-proxy']));
    }
  });

  it('show the files of examples/next as they are', () => {
    const shown = blocks.filter((block) => block.kind === 'example');
    expect(shown.map((block) => block.path).sort()).toEqual(
      ['app/api/hello/route.ts', 'limits.ts', 'proxy.ts'].sort(),
    );
    for (const block of shown) expect(codeAfterName(block), block.where).toBe(exampleFileAsShown(block.path));
  });

  it('were built under the tsconfig.json that next build writes for an app without one: strict: false', async () => {
    const tsconfig = JSON.parse(await readFile(join((app as NextAppCopy).dir, 'tsconfig.json'), 'utf8'));
    expect(tsconfig.compilerOptions.strict).toBe(false);
  });

  describe.each(quickStarts.filter((block) => block.kind === 'vercel'))('$where (on Vercel)', (block) => {
    const path = `/${block.route}`;

    it('limits each client by the x-real-ip Vercel sets', async () => {
      // As Vercel forwards a request: x-real-ip and X-Forwarded-For both the client's address.
      const from = (client: string) => ({ 'x-real-ip': client, 'x-forwarded-for': client });
      const client = newClient();
      const answers = [];
      for (let i = 0; i < 11; i++) answers.push(await get(0, path, from(client)));
      expect(statuses(answers)).toEqual([...Array(10).fill(200), 429]);
      expect(JSON.parse((answers[0] as Answer).body)).toEqual({ hello: 'world' });
      expect((await get(0, path, from(newClient()))).status).toBe(200);
    });

    it('on next start, which sets no x-real-ip, refuses the request and says what to change', async () => {
      const server = servers[1] as NextServer;
      expect((await get(1, path)).status).toBe(500);
      await server.untilOutput(/\[TOLLGATE_MISSING_IP\]/, 10_000);
      const said = server
        .output()
        .split('\n')
        .filter((line) => /TOLLGATE_MISSING_IP|ClientAddressError/.test(line));
      expect(said.length).toBeGreaterThan(0);
      for (const line of said) {
        expect(line).toContain('x-real-ip is set by Vercel, not by next start');
        expect(line).toContain('"Next.js: the client address"');
        expect(line).not.toMatch(/Express|Fastify|Koa|trust proxy/);
      }
      // Nothing is pooled: no request without an address shares a bucket, so nothing to warn about.
      expect(server.output()).not.toContain('TOLLGATE_UNTRUSTED_FORWARDED_FOR');
    });
  });

  describe.each(quickStarts.filter((block) => block.kind === 'behind-proxy'))(
    '$where (on next start behind a reverse proxy)',
    (block) => {
      it('limits each client by the X-Forwarded-For entry the proxy appended', async () => {
        const client = newClient();
        const answers = [];
        // Each request writes another address of its own before the proxy's entry: it buys nothing. (The
        // quick starts keep their buckets in memory: one process serves each client here.)
        for (let i = 0; i < 11; i++)
          answers.push(await get(0, `/${block.route}`, viaProxy(client, `192.0.2.${i}`)));
        expect(statuses(answers)).toEqual([...Array(10).fill(200), 429]);
        expect((await get(0, `/${block.route}`, viaProxy(newClient()))).status).toBe(200);
      });
    },
  );
});

describe('what the servers said', () => {
  it('is only what the quick starts asked for on next start: no other warning, no other error', () => {
    for (const server of servers) {
      const lines = server.output().split('\n');
      const codes = new Set(lines.flatMap((line) => /^\[(TOLLGATE_\w+)\]/.exec(line)?.[1] ?? []));
      expect([...codes].filter((code) => code !== 'TOLLGATE_MISSING_IP')).toEqual([]);
      const errors = lines.filter((line) => line.startsWith('⨯'));
      for (const line of errors) expect(line).toContain('[ClientAddressError]');
    }
  });

  it('names a section the fetch README has', async () => {
    const readme = await readFile(join(ROOT, 'packages/fetch/README.md'), 'utf8');
    expect(readme).toMatch(/^### Next\.js: the client address$/m);
  });
});
