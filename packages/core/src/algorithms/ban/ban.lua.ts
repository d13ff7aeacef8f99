/**
 * Bans in Lua, for the Redis script: `ban.ts` step for step. `b` is `{ refusals, bannedUntilMs }`; `rule`
 * is `{ after, duration }`.
 */
export const BAN_LUA = `
local BAN = {
  current = function(st, now)
    if not st then return { 0, 0 } end
    if st[2] > 0 and st[2] <= now then return { 0, 0 } end
    return { st[1], st[2] }
  end,
  banned = function(b, now) return b[2] > now end,
  refused = function(rule, b, now)
    if b[1] + 1 >= rule.after then return { 0, now + rule.duration } end
    return { b[1] + 1, 0 }
  end,
  idle = function(b, now) return math.max(0, b[2] - now) end,
}
`;
