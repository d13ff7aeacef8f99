/**
 * The settle script's two fast paths, for the commonest check: one policy and no ban. Each does what the
 * held path's `settle` does, with the algorithm's steps inlined and its state's fields in Lua locals,
 * which costs Redis less per check than the held path's tables and function calls.
 */
import { ALGORITHM_LUA } from '../../../algorithms/registry.js';
import { TollgateError } from '../../../support/tollgate-error.js';

/**
 * `settleOne`: what `settle` does, for a set of one policy and no ban, on its key's held state (a key that
 * comes more than once in its batch: a hot key under load). The algorithm's steps are inlined, and its
 * state's fields are locals instead of a copy in `st`.
 */
export function settleOne(): string {
  return oneCheck({
    name: 'settleOne',
    params: 'h, set, now, cost, mode, since',
    load: 'local stored = h.stored',
    field: (k) => `h[${k}]`,
    keep: (fields) => {
      const held = fieldList(fields, (k) => `h[${k}]`);
      const locals = fieldList(fields, (k) => `f${k}`);
      return `h.dirty, h.stored = true, quiet > 0
      if quiet > 0 then ${held}, h.n, h.px = ${locals}, ${fields}, quiet end`;
    },
  });
}

/**
 * `settleAlone`: `settleOne` for a key that comes once in the batch (many clients). It reads the key, and
 * writes or deletes it, itself, with no held copy, and answers -2, error if Redis refuses either.
 */
export function settleAlone(): string {
  const most = Math.max(...[...ALGORITHM_LUA.keys()].map(({ fields }) => fields));
  const parts = fieldList(most, (k) => `p${k}`);
  const parse = fieldsRead(Array.from({ length: most }, (_, k) => `p${k + 1}`));
  return `
-- The numbers of a stored string, as many as the longest state has (false for those it lacks).
local function parsed(raw)
  local ${parts}, from, sep = ${fieldList(most, () => 'false')}, 1, nil
  repeat
    ${parse}
  until true
  return ${parts}
end
${oneCheck({
  name: 'settleAlone',
  params: 'key, set, now, cost, mode, since',
  load: `local raw = redis.pcall('GET', key)
  if raw and raw.err then return refused(raw.err) end -- a refusal (a string's err is nil)
  local stored, ${parts} = raw and true or false, ${fieldList(most, () => 'false')}
  if raw then ${parts} = parsed(raw) end`,
  field: (k) => `p${k}`,
  keep: (fields) => `local written
      if quiet > 0 then
        local value
        if ${wholeFields(fields)} then
          value = format('${fieldList(fields, () => '%d', ':')}', ${fieldList(fields, (k) => `f${k}`)})
        else
          value = ${fieldList(fields, (k) => `num(f${k})`, " .. ':' .. ")}
        end
        written = redis.pcall('SET', key, value, 'PX', format('%d', quiet))
      elseif raw then
        written = redis.pcall('DEL', key)
      end
      if type(written) == 'table' and written.err then return refused(written.err) end`,
})}`;
}

/** How a one-policy path finds its key's state, and keeps what a check writes. */
interface OneCheck {
  readonly name: string;
  readonly params: string;
  /** Lua that sets `stored`, and whatever `field` reads. */
  readonly load: string;
  /** Where the state's k-th field (1-based) is before the check. */
  readonly field: (k: number) => string;
  /** Lua that keeps the check's fields (locals `f1`…) for `quiet` ms, or forgets them when it is 0. */
  readonly keep: (fields: number) => string;
}

/** A one-policy path as a Lua function: per algorithm, its fields in locals and its steps inlined. */
function oneCheck({ name, params, load, field, keep }: OneCheck): string {
  const branches = [...ALGORITHM_LUA].map(([{ code, fields }, lua], i) => {
    const inline = (body: string) => inFieldLocals(body, fields).trim();
    return `${i === 0 ? 'if' : 'elseif'} code == ${code} then
    local ${fieldList(fields, (k) => `f${k}`)} = ${fieldList(fields, field)}
    do
      ${inline(lua.current)}
    end
    local fitting = ${inline(lua.fits)}
    if mode == 'peek' or (mode == 'consume' and not fitting) then
      applied = fitting and 1 or 0
    else
      if mode == 'refund' then
        ${inline(lua.refund)}
      else
        ${inline(lua.apply)}
      end
      local quiet = max(0, ${inline(lua.idle)})
      ${keep(fields)}
    end
    if ${wholeFields(fields)} then
      ${fieldList(fields, (k) => `answers[n + ${k + 1}]`)} = ${fieldList(fields, (k) => `f${k}`)}
    else
      ${fieldList(fields, (k) => `answers[n + ${k + 1}]`)} = ${fieldList(fields, (k) => `reply(f${k})`)}
    end
  `;
  });
  return `
local function ${name}(${params})
  ${load}
  local code, limit, window, capacity = set[1], set[3], set[4], set[5]
  local applied = 1
  ${branches.join('')}end
  answers[n + 1] = applied
  n = n + set.fields + 1
end
`;
}

/**
 * Whether the fields `f1`…`f<count>` are all whole numbers a double holds exactly, as they are but for a
 * fractional cost: then one format writes them all, and a reply carries them as they are.
 */
function wholeFields(count: number): string {
  return fieldList(
    count,
    (k) => `f${k} % 1 == 0 and f${k} > -9007199254740992 and f${k} < 9007199254740992`,
    ' and ',
  );
}

/**
 * Lua that reads the numbers of the stored string `raw` into `names`, in order, one `find` and
 * `sub` each, for the body of a `repeat … until true` that declares `from` (1) and `sep`: a name
 * past the string's end keeps its value (false), so a state cut short fails.
 */
export function fieldsRead(names: readonly string[]): string {
  return names
    .map((name) => `sep = find(raw, ':', from, true)\n${name} = sub(raw, from, sep and sep - 1) + 0`)
    .join('\nif not sep then break end\nfrom = sep + 1\n');
}

/** `each(1)`, …, `each(count)`, joined by `separator`. */
export function fieldList(count: number, each: (k: number) => string, separator = ', '): string {
  return Array.from({ length: count }, (_, k) => each(k + 1)).join(separator);
}

/**
 * An algorithm's Lua body with its state's fields as locals: `st[o + k]` is `f<k + 1>` (or, named by
 * another `prefix`, `<prefix><k + 1>`).
 */
export function inFieldLocals(body: string, fields: number, prefix = 'f'): string {
  const inlined = body.replace(/st\[o(?: \+ (\d+))?\]/g, (field, k: string | undefined) => {
    const index = Number(k ?? 0);
    if (index >= fields)
      throw new TollgateError(
        'TOLLGATE_INTERNAL',
        `an algorithm's Lua reads ${field} of its ${fields} fields`,
      );
    return `${prefix}${index + 1}`;
  });
  if (/\bst\b|\breturn\b/.test(inlined)) {
    throw new TollgateError(
      'TOLLGATE_INTERNAL',
      `an algorithm's Lua must read its state only as st[o + k], and not return: ${body}`,
    );
  }
  return inlined;
}
