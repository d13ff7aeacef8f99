/**
 * Turns the HTTP runs into one line per framework × variant × build × scenario: medians over rounds, each compared
 * with its framework's baseline of the same round, and the bench's goals checked against the cheapest peer.
 */
import {
  type Framework,
  hasLimiter,
  isPeer,
  SCENARIOS,
  type Scenario,
  type ScenarioName,
  type Variant,
} from './apps/scenarios.js';
import type { Build } from './built/built-packages.js';
import type { CellResult, HttpSample } from './http-bench.js';
import { median } from './stats.js';

export interface CellSummary {
  readonly framework: Framework;
  readonly variant: Variant;
  readonly build: Build;
  readonly scenario: Scenario;
  readonly rounds: number;
  /** Median over rounds of (this variant's requests/s ÷ the baseline's in the same round). */
  readonly throughputVsBaseline: number;
  /** The lowest and highest of those per-round ratios. */
  readonly throughputRange: readonly [number, number];
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** App server CPU per request, µs. */
  readonly nodeUs: number;
  /** Redis CPU per request, µs. */
  readonly redisUs: number;
  /** Median over rounds of (node + Redis µs per request) minus the baseline's of the same round. */
  readonly addedUs: number;
  /** The lowest and highest of those per-round differences. */
  readonly addedRange: readonly [number, number];
  /** `addedUs` ÷ that of the peer with the least added CPU on this framework and scenario. */
  readonly addedVsCheapestPeer: number | undefined;
  readonly commands: number;
  readonly scriptCalls: number;
  readonly reads: number;
}

export const perRequest = (sample: HttpSample, value: number) => value / sample.load.requests;
/** App server and Redis CPU per request, µs. */
export const costUs = (s: HttpSample) => perRequest(s, s.nodeCpuUs + s.redis.cpuUs);
export const rps = (s: HttpSample) => s.load.requests / s.load.durationSec;

/**
 * The baseline of `cell`: its framework's app without a limiter, on the same keys (DENY's is ALLOW on one
 * hot key, which sends the very same requests to the very same app).
 */
export function baselineOf(results: readonly CellResult[], cell: CellResult): CellResult | undefined {
  return results.find(
    (r) => r.framework === cell.framework && r.variant === 'none' && r.scenario.keys === cell.scenario.keys,
  );
}

/**
 * One line per cell, plus a DENY line for each baseline: DENY is compared with the baseline's runs of ALLOW
 * on one hot key, which send the very same requests to the very same app.
 */
export function summarize(results: readonly CellResult[]): CellSummary[] {
  const denyBaselines = results
    .filter((r) => r.variant === 'none' && r.scenario.name === 'allow-hot')
    .map((r) => ({ ...r, scenario: SCENARIOS.find((s) => s.name === 'deny') as Scenario }));
  const partial = [...results, ...denyBaselines].map((cell) => {
    const baseline = baselineOf(results, cell);
    if (baseline === undefined) throw new Error(`no baseline for ${cell.framework} ${cell.scenario.name}`);
    const paired = cell.samples.flatMap((sample) => {
      const base = baseline.samples.find((b) => b.round === sample.round);
      return base ? [{ sample, base }] : [];
    });
    const of = (pick: (s: HttpSample) => number) => median(cell.samples.map(pick));
    const ratios = paired.map(({ sample, base }) => rps(sample) / rps(base));
    const added = paired.map(({ sample, base }) => costUs(sample) - costUs(base));
    return {
      framework: cell.framework,
      variant: cell.variant,
      build: cell.build,
      scenario: cell.scenario,
      rounds: cell.samples.length,
      throughputVsBaseline: median(ratios),
      throughputRange: range(ratios),
      p50Ms: of((s) => s.load.p50Ms),
      p99Ms: of((s) => s.load.p99Ms),
      nodeUs: of((s) => perRequest(s, s.nodeCpuUs)),
      redisUs: of((s) => perRequest(s, s.redis.cpuUs)),
      addedUs: median(added),
      addedRange: range(added),
      commands: of((s) => perRequest(s, s.redis.commands)),
      scriptCalls: of((s) => perRequest(s, s.redis.scriptCalls)),
      reads: of((s) => perRequest(s, s.redis.reads)),
    };
  });
  return partial.map((row) => {
    const cheapest = cheapestPeer(partial, row.framework, row.scenario.name);
    const addedVsCheapestPeer =
      !hasLimiter(row.variant) || cheapest === undefined || cheapest.addedUs <= 0
        ? undefined
        : row.addedUs / cheapest.addedUs;
    return { ...row, addedVsCheapestPeer };
  });
}

/** The peer that adds the least CPU per request on this framework and scenario. */
export function cheapestPeer<Row extends Pick<CellSummary, 'framework' | 'variant' | 'scenario' | 'addedUs'>>(
  rows: readonly Row[],
  framework: Framework,
  scenario: ScenarioName,
): Row | undefined {
  const peers = rows.filter(
    (r) => r.framework === framework && r.scenario.name === scenario && isPeer(r.variant),
  );
  return peers.sort((a, b) => a.addedUs - b.addedUs)[0];
}

/** One of the bench's goals, checked on one framework and scenario. */
export interface GoalCheck {
  readonly framework: Framework;
  readonly scenario: Scenario;
  readonly goal: string;
  readonly measured: string;
  /** `undefined`: not judged in this run (the cheapest peer's median added nothing measurable). */
  readonly met: boolean | undefined;
}

/**
 * The bench's goals for Tollgate on Redis: added CPU per request ≤ 0.75× the cheapest peer's; Redis CPU per
 * request ≤ the least of any peer's; on DENY, throughput ≥ 0.95× the baseline. Judged on this build only.
 */
export function checkGoals(rows: readonly CellSummary[]): GoalCheck[] {
  const checks: GoalCheck[] = [];
  for (const row of rows.filter((r) => r.variant === 'tollgate-redis' && r.build === 'this')) {
    const { framework, scenario } = row;
    const peers = rows.filter(
      (r) => r.framework === framework && r.scenario.name === scenario.name && isPeer(r.variant),
    );
    const cheapest = cheapestPeer(rows, framework, scenario.name);
    if (cheapest !== undefined && row.addedVsCheapestPeer !== undefined) {
      checks.push({
        framework,
        scenario,
        goal: 'added CPU/req ≤ 0.75× cheapest peer',
        measured: `${row.addedVsCheapestPeer.toFixed(2)}× (${fmt(row.addedUs)} vs ${fmt(cheapest.addedUs)} µs)`,
        met: row.addedVsCheapestPeer <= 0.75,
      });
    } else if (cheapest !== undefined) {
      // A ratio to a median at or below zero says nothing: the row is shown, unjudged, not left out.
      checks.push({
        framework,
        scenario,
        goal: 'added CPU/req ≤ 0.75× cheapest peer',
        measured: `no ratio (${fmt(row.addedUs)} vs ${fmt(cheapest.addedUs)} µs)`,
        met: undefined,
      });
    }
    const leastRedis = Math.min(...peers.map((p) => p.redisUs));
    checks.push({
      framework,
      scenario,
      goal: 'Redis CPU/req ≤ least of the peers',
      measured: `${fmt(row.redisUs)} vs ${fmt(leastRedis)} µs`,
      met: row.redisUs <= leastRedis,
    });
    if (scenario.expect === 'deny') {
      // What the refusal's bytes alone allow: the same 429 sent by an app with no limiter.
      const floor = rows.find(
        (r) =>
          r.framework === framework && r.scenario.name === scenario.name && r.variant === 'refusal-floor',
      );
      const floorNote = floor
        ? ` (the same 429 with no limiter: ${floor.throughputVsBaseline.toFixed(2)}×)`
        : '';
      checks.push({
        framework,
        scenario,
        goal: 'DENY throughput ≥ 0.95× baseline',
        measured: `${row.throughputVsBaseline.toFixed(2)}×${floorNote}`,
        met: row.throughputVsBaseline >= 0.95,
      });
    }
  }
  return checks;
}

/** The lowest and highest of `values`. */
export function range(values: readonly number[]): [number, number] {
  return [Math.min(...values), Math.max(...values)];
}

function fmt(us: number): string {
  return us.toFixed(1);
}
