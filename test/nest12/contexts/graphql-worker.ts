/**
 * The second process of the exactness test: serves the race app (`graphql-race.ts`), prints `ready
 * <url>` once it listens, and closes when its stdin ends.
 * argv: redisUrl prefix
 */
import { startRaceApp } from './graphql-race.js';

const [redisUrl = '', prefix = ''] = process.argv.slice(2);
const app = await startRaceApp(redisUrl, prefix);
process.stdout.write(`ready ${app.url}\n`);
process.stdin.resume().once('end', () => app.close());
