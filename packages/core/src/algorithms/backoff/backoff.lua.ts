/**
 * Exponential backoff in Lua, for the Redis script: `backoff.ts` step for step, on the flat state array
 * `st` at offset `b` (`st[b]` the refusals in a row, at most MAX_DOUBLINGS; `st[b + 1]` until when the
 * client is held back; `st[b + 2]` the streak's base wait, ms), changed in place. Made only for a batch
 * with a backoff in it: `backoffSteps()`.
 */
import { MAX_DOUBLINGS } from './backoff.js';

export const BACKOFF_LUA = `
local function backoffSteps()
  return {
    current = function(st, b, stored)
      if not stored then st[b], st[b + 1], st[b + 2] = 0, 0, 0 end
    end,
    refused = function(st, b, now, wait)
      local refusals = st[b]
      local base = refusals == 0 and wait or st[b + 2]
      st[b] = min(refusals + 1, ${MAX_DOUBLINGS})
      st[b + 1] = max(st[b + 1], now + base * 2 ^ refusals)
      st[b + 2] = base
    end,
    admitted = function(st, b) st[b], st[b + 1], st[b + 2] = 0, 0, 0 end,
    idle = function(st, b, now) return max(0, st[b + 1] - now) end,
  }
end
`;
