/**
 * The second process of the exactness test: serves every race app (`race-apps.ts`), prints `ready
 * <addresses>` once they all listen (one line, the apps' addresses by context as JSON), and closes when
 * its stdin ends.
 * argv: redisUrl prefix
 */
import { startRaceApps } from './race-apps.js';

const [redisUrl = '', prefix = ''] = process.argv.slice(2);
const apps = await startRaceApps(redisUrl, prefix);
process.stdout.write(`ready ${JSON.stringify(apps.addresses)}\n`);
process.stdin.resume().once('end', () => apps.close());
