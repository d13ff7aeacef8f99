/**
 * Data of the bench pictures, from `data/bench.json`, by the bench's own summary (the figures its report
 * prints): req/s ÷ the framework's baseline, and Tollgate's added CPU per request ÷ the cheapest peer's,
 * each with its lowest and highest round.
 */
import { VARIANT_LABELS, type Variant } from '@tollgate/bench/apps/scenarios.js';
import type { CellResult } from '@tollgate/bench/http-bench.js';
import {
  baselineOf,
  type CellSummary,
  cheapestPeer,
  costUs,
  summarize,
} from '@tollgate/bench/http-summary.js';
import type { BenchData } from './bench-data.js';

/** One bar: a median over rounds, and the lowest and highest round. */
export interface RatioBar {
  readonly framework: string;
  readonly scenario: string;
  readonly variant: string;
  /** Tollgate's own variants, the peers, and the floor (Tollgate's 429 with no limiter). */
  readonly kind: 'tollgate' | 'peer' | 'floor';
  readonly value: number;
  readonly low: number;
  readonly high: number;
  /** For a CPU ratio: the peer it is divided by. */
  readonly peer?: string;
  /** `false`: no ratio, as the peer added nothing measurable (its median at or below 0); value 0. */
  readonly measurable: boolean;
}

const FRAMEWORK_NAMES: Readonly<Record<string, string>> = {
  express: 'Express',
  fastify: 'Fastify',
  koa: 'Koa',
  hono: 'Hono',
  nestjs: 'NestJS',
};

/** Every limiter (and the floor) on every framework and scenario: req/s ÷ the baseline's, per round. */
export function throughputBars({ http }: BenchData): RatioBar[] {
  return summarize(http)
    .filter((row) => row.variant !== 'none')
    .map((row) => ({
      ...names(row),
      kind: kindOf(row.variant),
      value: row.throughputVsBaseline,
      low: row.throughputRange[0],
      high: row.throughputRange[1],
      measurable: true,
    }));
}

/**
 * Tollgate on Redis: CPU added per request (app server and Redis, above the baseline) ÷ that of the peer
 * adding the least. The bar is the bench's figure (median ÷ median); the range, the same ratio round by
 * round (rounds where the peer added nothing measurable are left out). Where the peer's median added
 * nothing measurable, there is no ratio, and the bar says so.
 */
export function cpuVsPeerBars({ http }: BenchData): RatioBar[] {
  const rows = summarize(http);
  return rows.flatMap((row): RatioBar[] => {
    const peer = cheapestPeer(rows, row.framework, row.scenario.name);
    if (row.variant !== 'tollgate-redis' || peer === undefined) return [];
    const bar = { ...names(row), kind: 'tollgate' as const, peer: VARIANT_LABELS[peer.variant] };
    if (row.addedVsCheapestPeer === undefined)
      return [{ ...bar, value: 0, low: 0, high: 0, measurable: false }];
    const ours = addedByRound(http, cellOf(http, row));
    const theirs = addedByRound(http, cellOf(http, peer));
    const ratios = [...ours].flatMap(([round, us]) => {
      const peerUs = theirs.get(round);
      return peerUs !== undefined && peerUs > 0 ? [us / peerUs] : [];
    });
    const value = row.addedVsCheapestPeer;
    return [{ ...bar, value, low: Math.min(...ratios), high: Math.max(...ratios), measurable: true }];
  });
}

function names(row: CellSummary) {
  return {
    framework: FRAMEWORK_NAMES[row.framework] ?? row.framework,
    scenario: row.scenario.title,
    variant: VARIANT_LABELS[row.variant],
  };
}

function kindOf(variant: Variant): RatioBar['kind'] {
  if (variant === 'refusal-floor') return 'floor';
  return variant.startsWith('tollgate-') ? 'tollgate' : 'peer';
}

function cellOf(http: readonly CellResult[], row: CellSummary): CellResult {
  const cell = http.find(
    (c) =>
      c.framework === row.framework && c.variant === row.variant && c.scenario.name === row.scenario.name,
  );
  if (cell === undefined) throw new Error(`no cell for ${row.framework} ${row.variant} ${row.scenario.name}`);
  return cell;
}

/** CPU per request above the baseline's in the same round, µs, by round (as the bench's summary pairs them). */
function addedByRound(http: readonly CellResult[], cell: CellResult): Map<number, number> {
  const baseline = baselineOf(http, cell);
  const added = new Map<number, number>();
  for (const sample of cell.samples) {
    const base = baseline?.samples.find((b) => b.round === sample.round);
    if (base !== undefined) added.set(sample.round, costUs(sample) - costUs(base));
  }
  return added;
}
