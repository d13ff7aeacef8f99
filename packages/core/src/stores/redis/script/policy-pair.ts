/**
 * Generates the single-check scripts of two policies, one per ordered pair of algorithms: what the script
 * of several policies does for a set of exactly two, with each policy's steps inlined, its numbers and its
 * state's fields in locals of their own, and no loop, table or code to read. Two policies on one key (a
 * burst and a daily quota, say) are the commonest set of more than one.
 *
 * KEYS[1]  the check's key, both policies' state in one string, as the script of several policies
 *          writes it: the first policy's fields, then the second's
 * ARGV     per policy, in order, its limit and windowMs, and capacityUnits for an algorithm that reads it
 *          (as the script of several policies is sent them, without the count and the codes); then the
 *          check's cost, deadline, and now unless it is the server's
 * Returns  as the script of several policies answers: { now, applied, every field }; or, for a check
 *          applied and written in whole numbers, the same as text: every field, then now as ms or as the
 *          server's seconds and microseconds
 */
import type { Algorithm, AlgorithmLua } from '../../../algorithms/algorithm.js';
import { ALGORITHM_LUA } from '../../../algorithms/registry.js';
import { fieldList, inFieldLocals } from './fast-paths.js';
import {
  indented,
  keptExpiry,
  policyNamesOf,
  prelude,
  SAFE,
  textAnswerWrite,
  withLibrary,
  writtenAndAnswered,
} from './single-check.js';

/** A policy as a script of two inlines it: its algorithm, its steps, and its numbers' and fields' locals. */
export interface PairMember {
  readonly algorithm: Algorithm;
  readonly lua: AlgorithmLua;
  /** Its numbers' locals (`limit1`, …), in ARGV order. */
  readonly names: readonly string[];
  /** Its fields' locals (`f1`, … for the first policy, `g1`, … for the second). */
  readonly fields: readonly string[];
  /** One of its steps with its numbers and fields as their locals, indented by `spaces`. */
  readonly step: (body: string, spaces: number) => string;
}

/** The policies of a pair, of `first`'s algorithm then `second`'s, as its scripts inline them. */
export function pairMembers(first: Algorithm, second: Algorithm): readonly [PairMember, PairMember] {
  return [member(first, 1), member(second, 2)];
}

/** The policy at `position` (1 or 2) of the pair, of `algorithm`. */
function member(algorithm: Algorithm, position: 1 | 2): PairMember {
  const lua = ALGORITHM_LUA.get(algorithm) as AlgorithmLua;
  const prefix = position === 1 ? 'f' : 'g';
  const numbers = /\b(limit|window|capacity)\b/g;
  // Its numbers renamed in code, not in the comments that explain it.
  const own = (body: string) =>
    body
      .split('\n')
      .map((line) => {
        const comment = line.indexOf('--');
        const code = comment < 0 ? line : line.slice(0, comment);
        return code.replace(numbers, `$1${position}`) + (comment < 0 ? '' : line.slice(comment));
      })
      .join('\n');
  return {
    algorithm,
    lua,
    names: policyNamesOf(algorithm).map((name) => `${name}${position}`),
    fields: Array.from({ length: algorithm.fields }, (_, k) => `${prefix}${k + 1}`),
    step: (body, spaces) => indented(own(inFieldLocals(body, algorithm.fields, prefix)), spaces),
  };
}

/** One policy's charge, in a block of its own: its cost applied, and `quiet` kept at its idle time or more. */
export function applied(apply: string, idle: string): string {
  return `  do
    ${apply}
    local idle = ${idle}
    if idle > quiet then quiet = idle end
  end
`;
}

/**
 * Lua that reads every one of `fields` from the stored string `raw`, in one match: cheaper than a find
 * and a sub for each. A state cut short fails.
 */
export function matchedFields(fields: readonly string[]): string {
  const locals = fields.join(', ');
  return `-- One match reads every field: cheaper than a find and a sub for each. A state cut short fails.
${locals} = match(raw, '^${fields.map(() => '([^:]*)').join(':')}')
${locals} = ${fields.map((f) => `${f} + 0`).join(', ')}`;
}

/** The file a pair's script is committed as, in `lua/`. */
export function policyPairFile(first: Algorithm, second: Algorithm): string {
  return `check-${first.name}-and-${second.name}.lua`;
}

/** The single-check script of two policies, of `first`'s algorithm then `second`'s, as Redis runs it. */
export function policyPairCheckLua(first: Algorithm, second: Algorithm): string {
  const pair = pairMembers(first, second);
  const [one, two] = pair;
  const names = [...one.names, ...two.names];
  const fields = [...one.fields, ...two.fields];
  const locals = fields.join(', ');
  const whole = fields.map((f) => `(${SAFE(f)})`).join('\nand ');
  const anyNumber = fields
    .map((f) => `(${SAFE(f)} and format('%d', ${f}) or format('%.17g', ${f}))`)
    .join("\n.. ':' .. ");
  const policyLines = [one, two]
    .map(({ names: own }, i) => {
      const from = i === 0 ? 1 : one.names.length + 1;
      return `local ${own.join(', ')} = ${own.map((_, k) => `argv[${from + k}] + 0`).join(', ')}`;
    })
    .join('\n');
  const argvLine = pair
    .map(({ algorithm, names: own }) => `${own.join(', ')} (${algorithm.name})`)
    .join(', then ');
  const header = `-- A single check of two policies (${first.name}, then ${second.name}): one consume, alone in its call, atomic across both.
-- KEYS[1]  the check's key, both policies' state in one string: ${one.fields.join(':')} (${first.name}), then ${two.fields.join(':')} (${second.name})
-- ARGV     ${argvLine}; then cost, deadline ('' none), now ('' or absent: the server's)
-- Path: read the state (-2: Redis refused the key), bring each policy to now; if the cost fits both,
-- apply it to each and write (or delete) the state. Answers { now, applied, every field }; -1: past its deadline.
-- Applied and written in whole numbers, it answers '${fields.join(':')}' then ':now' or ':seconds:microseconds'.`;
  return withLibrary(
    header,
    `
${prelude(policyLines, (k) => String(names.length + 1 + k), true)}local stored, ${locals} = raw and true or false, ${fieldList(fields.length, () => 'false')}
if raw then
  ${matchedFields(fields)}
end
${keptExpiry(pair.map(({ lua, step }) => ({ lua, inline: (body) => step(body, 0) })))}${pair.map(({ step, lua }) => `do\n  ${step(lua.current, 2)}\nend\n`).join('')}local applied = 0
if (${one.step(one.lua.fits, 4)})
  and (${two.step(two.lua.fits, 4)}) then
  applied = 1
  local quiet, written = 0, nil
${pair.map(({ step, lua }) => applied(step(lua.apply, 4), step(lua.idle, 4))).join('')}${writtenAndAnswered(
  textAnswerWrite(
    whole,
    fields.map(() => '%d').join(':'),
    locals,
    anyNumber,
    undefined,
    pair.every(({ lua }) => lua.expiryKept !== undefined),
  ),
  fields,
  whole,
)}`,
  );
}
