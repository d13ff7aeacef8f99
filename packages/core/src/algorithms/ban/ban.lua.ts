/**
 * Bans in Lua, for the Redis script: `ban.ts` step for step, on the flat state array `st` at offset `o`
 * (`st[o]` the refusals in a row, `st[o + 1]` when the ban ends), changed in place. `rule` is
 * `{ after, duration }`. Redis runs the whole script on every call, so these are made only for a batch
 * with a ban in it: `banSteps()`.
 */
export const BAN_LUA = `
local function banSteps()
  return {
    current = function(st, o, stored, now)
      if not stored or (st[o + 1] > 0 and st[o + 1] <= now) then st[o], st[o + 1] = 0, 0 end
    end,
    banned = function(st, o, now) return st[o + 1] > now end,
    refused = function(rule, st, o, now)
      if st[o] + 1 >= rule[1] then st[o], st[o + 1] = 0, now + rule[2] else st[o] = st[o] + 1 end
    end,
    admitted = function(st, o) st[o], st[o + 1] = 0, 0 end,
    idle = function(st, o, now) return max(0, st[o + 1] - now) end,
  }
end
`;
