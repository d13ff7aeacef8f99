/** The `wrk` load generator: one thread, pinned to the load core, driven by a generated Lua script. */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LOAD_CORE, pinnedCommand } from '../cpu.js';
import type { LoadGenerator, LoadResult, LoadSpec } from './load-types.js';

const run = promisify(execFile);
const SCRIPT_DIR = mkdtempSync(join(tmpdir(), 'tollgate-bench-wrk-'));

/** A `wrk` of this version. */
export function wrkLoad(version: string): LoadGenerator {
  const scripts = new Map<string, string>();
  return {
    name: `wrk ${version} (1 thread)`,
    async run(spec) {
      const scriptKey = `${spec.header}|${spec.keyPrefix}|${spec.keys}`;
      let script = scripts.get(scriptKey);
      if (script === undefined) {
        script = join(SCRIPT_DIR, `load-${scripts.size}.lua`);
        writeFileSync(script, luaScript(spec));
        scripts.set(scriptKey, script);
      }
      const wrkArgs = ['-t1', `-c${spec.connections}`, `-d${spec.durationSec}s`, '--timeout', '10s'];
      const [command, args] = pinnedCommand(LOAD_CORE, 'wrk', [...wrkArgs, '-s', script, spec.url]);
      const { stdout } = await run(command, args, { maxBuffer: 1 << 20 });
      return parseResult(stdout);
    },
  };
}

/**
 * The script: sets the client header (a fresh one per request when there are several keys), counts
 * responses by status in each thread, and prints one JSON line when done.
 */
function luaScript({ header, keyPrefix, keys }: LoadSpec): string {
  const perRequest =
    keys > 1
      ? `function request()
  wrk.headers[header] = prefix .. math.random(${keys})
  return wrk.format()
end`
      : '';
  return `local header = ${JSON.stringify(header)}
local prefix = ${JSON.stringify(keyPrefix)}
wrk.headers[header] = prefix .. "1"
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) statuses = {} end
${perRequest}
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  local parts = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      table.insert(parts, string.format('"%d":%d', status, count))
    end
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"socketErrors":%d,"p50Us":%d,"p99Us":%d,"statuses":{%s}}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), table.concat(parts, ",")))
end
`;
}

function parseResult(stdout: string): LoadResult {
  const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (line === undefined) throw new Error(`wrk printed no result:\n${stdout}`);
  const raw = JSON.parse(line.slice('BENCH_RESULT '.length)) as {
    requests: number;
    durationUs: number;
    socketErrors: number;
    p50Us: number;
    p99Us: number;
    statuses: Record<string, number>;
  };
  // Two threads' counts of one status would be two entries: add them up.
  const statuses: Record<string, number> = {};
  for (const [status, count] of Object.entries(raw.statuses))
    statuses[status] = (statuses[status] ?? 0) + count;
  return {
    requests: raw.requests,
    durationSec: raw.durationUs / 1e6,
    statuses,
    socketErrors: raw.socketErrors,
    p50Ms: raw.p50Us / 1000,
    p99Ms: raw.p99Us / 1000,
  };
}
