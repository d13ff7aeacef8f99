/**
 * The fixed window in Lua, for the Redis script: `fixed-window.ts` step for step (`st[o]` the window's
 * start, `st[o + 1]` its count).
 */
import type { AlgorithmLua } from '../algorithm.js';

export const FIXED_WINDOW_LUA: AlgorithmLua = {
  current: `
    -- A window that has ended, none yet, or one with nothing counted: a new one starts now. A clock that
    -- stepped back keeps the window it is in.
    if not stored or st[o + 1] <= 0 or now >= st[o] + window then st[o], st[o + 1] = now, 0 end`,
  fits: `
    st[o + 1] + cost <= limit`,
  apply: `
    st[o + 1] = st[o + 1] + cost`,
  refund: `
    -- A window that began after the charge never counted it.
    if st[o] <= since then st[o + 1] = max(0, st[o + 1] - cost) end`,
  rebase: '',
  wait: `
    if cost > limit then return -1 end
    return st[o + 1] + cost <= limit and 0 or max(0, st[o] + window - now)`,
  restart: `
    -- The window starts again now, its count kept: the client waits a whole window from its last knock.
    if cost <= limit then st[o] = now end`,
  idle: `
    st[o + 1] > 0 and st[o] + window - now or 0`,
  // A window that goes on, with a count: its state was written to expire at the window's end.
  expiryKept: `
    st[o + 1] > 0 and now < st[o] + window`,
};
