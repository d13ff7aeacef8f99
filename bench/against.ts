/**
 * `--against=DIR`: which commit each of the two builds is, and this build's HTTP rows ÷ the other build's,
 * round by round, so that a difference can be read against the round-to-round noise.
 */
import { execFileSync } from 'node:child_process';
import { type Framework, type Scenario, usesRedis, type Variant } from './apps/scenarios.js';
import type { CellResult, HttpSample } from './http-bench.js';
import { baselineOf, costUs, perRequest, range, rps } from './http-summary.js';
import { median } from './stats.js';

/** A median over rounds of one ratio, with the lowest and highest round. */
export interface RoundRatio {
  readonly median: number;
  readonly range: readonly [number, number];
}

/** One Tollgate variant on one framework and scenario: this build ÷ the `--against` build. */
export interface BuildRatio {
  readonly framework: Framework;
  readonly variant: Variant;
  readonly scenario: Scenario;
  /** Each ratio is undefined where a round of the other build measured nothing to divide by. */
  readonly rps: RoundRatio | undefined;
  readonly nodeUs: RoundRatio | undefined;
  /** Undefined too where a round's added CPU of the other build is not above the baseline's. */
  readonly addedUs: RoundRatio | undefined;
  /** Undefined too for a variant without Redis. */
  readonly redisUs: RoundRatio | undefined;
}

/** `/work/main at 6d11b3a`, with a note if `packages/` has changes not committed. */
export function describeCheckout(dir: string): string {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const commit = git('rev-parse', '--short', 'HEAD').trim();
    const dirty = git('status', '--porcelain', '--', 'packages').trim() !== '';
    return `${dir} at ${commit}${dirty ? ' (with changes under packages/ not committed)' : ''}`;
  } catch {
    return `${dir} (not a git checkout)`;
  }
}

/** Each Tollgate cell of this build beside the same cell of the other build, paired round by round. */
export function compareBuilds(results: readonly CellResult[]): BuildRatio[] {
  return results.flatMap((cell) => {
    const other = results.find(
      (r) =>
        r.build === 'against' &&
        r.framework === cell.framework &&
        r.variant === cell.variant &&
        r.scenario.name === cell.scenario.name,
    );
    const baseline = baselineOf(results, cell);
    if (cell.build !== 'this' || other === undefined || baseline === undefined) return [];
    const rounds = cell.samples.flatMap((sample) => {
      const before = other.samples.find((s) => s.round === sample.round);
      const base = baseline.samples.find((s) => s.round === sample.round);
      return before && base ? [{ after: sample, before, base }] : [];
    });
    const ratio = (pick: (s: HttpSample, base: HttpSample) => number) =>
      roundRatio(rounds.map(({ after, before, base }) => [pick(after, base), pick(before, base)] as const));
    return [
      {
        framework: cell.framework,
        variant: cell.variant,
        scenario: cell.scenario,
        rps: ratio(rps),
        nodeUs: ratio((s) => perRequest(s, s.nodeCpuUs)),
        addedUs: ratio((s, base) => costUs(s) - costUs(base)),
        redisUs: usesRedis(cell.variant) ? ratio((s) => perRequest(s, s.redis.cpuUs)) : undefined,
      },
    ];
  });
}

/** after ÷ before of each round; undefined if any round's `before` is not positive (no ratio to take). */
function roundRatio(pairs: readonly (readonly [after: number, before: number])[]): RoundRatio | undefined {
  if (pairs.length === 0 || pairs.some(([, before]) => before <= 0)) return undefined;
  const ratios = pairs.map(([after, before]) => after / before);
  return { median: median(ratios), range: range(ratios) };
}
