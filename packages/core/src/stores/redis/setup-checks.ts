/**
 * What the store checks once about its client and server, warning through its logger: client settings
 * that would queue checks, an eviction policy that may drop live buckets, and an ACL user that lacks a
 * command Tollgate sends.
 */
import { createHash } from 'node:crypto';
import type { Warnings } from '../../support/warnings.js';
import type { LuaScript, RedisClientAdapter } from './redis-client.js';

/**
 * Warns if the client would hold checks back and send them later. `false` while the client cannot tell
 * yet (a node-redis cluster before it connects): ask again after the first answer.
 */
export function checkQueueing(client: RedisClientAdapter, warnings: Warnings): boolean {
  const queueing = client.queueing();
  if (queueing === 'unknown') return false;
  if (queueing === undefined) return true;
  warnings.once(
    'TOLLGATE_REDIS_CLIENT_QUEUES',
    `the Redis client would hold commands back and send them later (${queueing.why}). Tollgate sends no ` +
      'check while the client is not connected, but a check caught by a dropped connection may still reach ' +
      `Redis after it reconnects. Create the client with ${queueing.fix}.`,
  );
  return true;
}

/** Warns if Redis may evict buckets that are still limiting someone; asked once, after the first answer. */
export async function checkEvictionPolicy(client: RedisClientAdapter, warnings: Warnings): Promise<void> {
  const policy = await riskyEvictionPolicy(client);
  if (policy === undefined) return;
  warnings.once(
    'TOLLGATE_REDIS_EVICTION_POLICY',
    `Redis runs with maxmemory-policy ${policy}: when memory is full it may evict buckets that are still ` +
      'limiting someone, handing their clients fresh tokens. Use volatile-ttl (evicts the buckets closest to ' +
      'full first) or noeviction (writes fail when full, and checks take the fallback).',
  );
}

/** Eviction policies under which Redis never drops a bucket that is still limiting someone first. */
const SAFE_EVICTION_POLICIES = new Set(['noeviction', 'volatile-ttl']);

/**
 * The server's `maxmemory-policy` when it may evict live buckets (every `allkeys-*`, and the `volatile-*`
 * policies other than `volatile-ttl`, since every Tollgate key has an expiry). `undefined` when it is
 * safe, when `maxmemory` is 0 (no limit), or when the server does not let us ask (managed services often
 * disable CONFIG).
 */
async function riskyEvictionPolicy(client: RedisClientAdapter): Promise<string | undefined> {
  try {
    const config = configMap(await client.configGet('maxmemory*'));
    const policy = config.get('maxmemory-policy');
    if (policy === undefined || config.get('maxmemory') === '0') return undefined;
    return SAFE_EVICTION_POLICIES.has(policy) ? undefined : policy;
  } catch {
    return undefined;
  }
}

/** CONFIG GET's answer as a map: a flat array in RESP2, a map (or an object) in RESP3. */
function configMap(reply: unknown): Map<string, string> {
  if (reply instanceof Map) return new Map([...reply].map(([k, v]) => [String(k), String(v)]));
  const entries: [string, string][] = [];
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) entries.push([String(reply[i]), String(reply[i + 1])]);
  } else if (typeof reply === 'object' && reply !== null) {
    for (const [k, v] of Object.entries(reply)) entries.push([k, String(v)]);
  }
  return new Map(entries);
}

/**
 * Every command Tollgate runs on its keys, with arguments of the shape it sends (`$key` is a key): the
 * check scripts' (`script/scripts.generated.ts`: TIME, GET, MGET, SET, DEL), the lease script's
 * (`algorithms/concurrency/concurrency.lua.ts`), the reservation script's (`script/reservation-script.ts`:
 * the sorted sets and the hash of reservations by id), and DEL, sent by `reset` too. An ACL user needs them all,
 * and EVALSHA and EVAL, which run the scripts (EVAL after NOSCRIPT, as after a restart or a failover).
 */
const SCRIPT_COMMANDS = [
  'GET $key',
  'MGET $key',
  'SET $key 0 PX 1',
  'DEL $key',
  'TIME',
  'ZREMRANGEBYSCORE $key -inf 0',
  'ZREM $key lease',
  'ZCARD $key',
  'ZADD $key 0 lease',
  'PEXPIRE $key 1',
  'ZRANGEBYSCORE $key -inf 0',
  'ZRANGE $key 0 0 WITHSCORES',
  'ZSCORE $key reservation',
  'ZREMRANGEBYRANK $key 0 0',
  'HGET $key reservation',
  'HSET $key reservation 0',
  'HDEL $key reservation',
];

/**
 * The ACL rules a user needs for Tollgate's keys under `prefix`, to add with `ACL SETUSER <user> …`:
 * the key pattern and the commands. `+info` is for the client: ioredis's ready check sends INFO (with
 * Sentinel, it is how ioredis confirms it reached the master).
 */
export function aclRules(prefix: string): string {
  const commands = [
    'EVALSHA',
    'EVAL',
    ...new Set(SCRIPT_COMMANDS.map((line) => line.split(' ', 1)[0] ?? line)),
    'INFO',
  ];
  // A key pattern is a glob: the prefix's own glob characters are matched literally.
  const pattern = `~${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  return `${pattern} ${commands.map((name) => `+${name.toLowerCase()}`).join(' ')}`;
}

/**
 * Which of the commands in ARGV (each a command line; `$key` stands for KEYS[1]) the ACL user running the
 * script may not run on that key; `false` before Redis 7.0, which has no `redis.acl_check_cmd`.
 */
const REFUSED_COMMANDS_LUA = `
if not redis.acl_check_cmd then return false end
local refused = {}
for i = 1, #ARGV do
  local words = {}
  for word in string.gmatch(ARGV[i], '%S+') do words[#words + 1] = word == '$key' and KEYS[1] or word end
  if not redis.acl_check_cmd(unpack(words)) then refused[#refused + 1] = words[1] end
end
return refused
`;

const REFUSED_COMMANDS_SCRIPT: LuaScript = {
  source: REFUSED_COMMANDS_LUA,
  sha1: createHash('sha1').update(REFUSED_COMMANDS_LUA).digest('hex'),
};

/**
 * Whether Redis's error is an ACL refusal: NOPERM when it refuses the command the client sent (or one of
 * its keys), and, from inside a script, "ERR The user executing the script can't…" (Redis 6, 7.0) or
 * "ERR ACL failure in script: …" (Redis 7.2, Valkey).
 */
export function isAclRefusal(reason: string): boolean {
  return /NOPERM|PermissionDenied|ACL failure|user executing the script can't/.test(reason);
}

/** What a refusal does to checks, as its log line says it, and the level it is logged at. */
export interface RefusalEffect {
  readonly level: 'warn' | 'error';
  readonly effect: string;
}

/** A refusal of a command that checks cannot go without. */
export const CHECKS_FALL_BACK: RefusalEffect = {
  level: 'error',
  effect: "checks take the limiters' fallback until it is granted",
};

/** A refusal of the MGET of a batch script, which then reads its keys one by one. */
export const KEYS_READ_ONE_BY_ONE: RefusalEffect = {
  level: 'warn',
  effect:
    'checks that go to Redis together read their keys one by one, at more cost to Redis, until it is granted',
};

/**
 * Logs that Redis refuses Tollgate's ACL user a command, naming it, with what that does to checks and the
 * ACL rules the user needs (the store calls it once). Redis names a command the client sent, and from 7.2
 * one a script runs; Redis 7.0 does not name the one a script runs, so the store asks it, with
 * `redis.acl_check_cmd`, which of Tollgate's commands the user lacks on a key under `prefix`.
 */
export async function reportAclRefusal(
  client: RedisClientAdapter,
  reason: string,
  prefix: string,
  warnings: Warnings,
  { level, effect }: RefusalEffect = CHECKS_FALL_BACK,
): Promise<void> {
  const named = /run the '([^']+)' command/.exec(reason)?.[1];
  const keyRefused = /access .*keys?\b/i.test(reason);
  const refused = named ? [named] : keyRefused ? [] : await refusedCommands(client, `${prefix}{acl-check}`);
  const names = refused.map((name) => name.replace('|', ' ').toUpperCase());
  let what = 'a command its scripts run (Redis does not say which; ACL LOG does)';
  if (names.length > 0) what = `the ${names.join(', ')} command${names.length > 1 ? 's' : ''}`;
  else if (keyRefused) what = `access to its keys under ${prefix}`;
  warnings.event(
    'TOLLGATE_STORE_ERROR',
    level,
    `Redis refuses the client's ACL user ${what} (${reason.split(' script: ')[0]}): ${effect}. ` +
      `Tollgate needs: ACL SETUSER <user> ${aclRules(prefix)}`,
  );
}

/**
 * Whether Redis's error says it runs no scripts: EVALSHA or EVAL unknown (renamed away with
 * `rename-command`, or a server without its Lua engine, as Valkey can be run) or no scripting engine.
 */
export function isScriptingUnavailable(reason: string): boolean {
  return /unknown command '(evalsha|eval)'|scripting engine|lua engine/i.test(reason);
}

/** Logs, once per store, that the server runs no scripts, which every check of Tollgate's is. */
export function reportScriptingUnavailable(reason: string, warnings: Warnings): void {
  warnings.event(
    'TOLLGATE_STORE_ERROR',
    'error',
    `Redis runs no Lua scripts here (${reason.split(', with args')[0]}), and every check is one: checks ` +
      "take the limiters' fallback until scripting is available. Tollgate needs EVALSHA and EVAL with " +
      'the Lua engine: Redis 6.2 or later, or Valkey 7.2 or later with its Lua engine loaded.',
  );
}

/** The commands of Tollgate's the ACL user may not run on `key`; none when Redis cannot tell. */
async function refusedCommands(client: RedisClientAdapter, key: string): Promise<string[]> {
  try {
    const reply = await client.runScript(REFUSED_COMMANDS_SCRIPT, [key], SCRIPT_COMMANDS);
    return Array.isArray(reply) ? reply.map(String) : [];
  } catch {
    return [];
  }
}
