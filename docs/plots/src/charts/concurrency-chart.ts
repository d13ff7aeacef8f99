/** The concurrency picture: requests in progress over time against the limit, and those refused. */
import type { TopLevelSpec } from 'vega-lite';
import { CONCURRENCY_LIMIT, type ConcurrencyRun, GAPS_MS, WORK_MS } from '../runs/concurrency-run.js';

const SERIES = {
  'in progress': '#4c78a8',
  'in progress without a limit': '#999999',
  'refused request': '#e45756',
};

/**
 * The chart of a {@link ConcurrencyRun}.
 *
 * @example
 * const svg = await renderSvg(concurrencyChart(await concurrencyRun()));
 */
export function concurrencyChart({ inProgress, refusedAtSec }: ConcurrencyRun): TopLevelSpec {
  const x = { field: 'atSec', type: 'quantitative', title: 'time (s)' } as const;
  const y = { type: 'quantitative', title: 'requests in progress', axis: { tickMinStep: 1 } } as const;
  const color = (series: keyof typeof SERIES) =>
    ({
      datum: series,
      type: 'nominal',
      title: null,
      legend: { labelLimit: 300 },
      scale: { domain: Object.keys(SERIES), range: Object.values(SERIES) },
    }) as const;
  return {
    title: {
      text: `A concurrency limit of ${CONCURRENCY_LIMIT}: requests in progress for one client`,
      subtitle: [
        `Requests of ${secondsRange(WORK_MS)} arrive every ${secondsRange(GAPS_MS)}; each holds a lease until it ends.`,
        `A request that finds ${CONCURRENCY_LIMIT} in progress is refused at once; it never waits for a lease.`,
      ],
    },
    width: 720,
    height: 200,
    layer: [
      {
        data: { values: inProgress },
        mark: { type: 'area', interpolate: 'step-after', opacity: 0.2, color: SERIES['in progress'] },
        encoding: { x, y: { ...y, field: 'admitted' } },
      },
      {
        data: { values: [{}] },
        mark: { type: 'rule', color: '#222', strokeWidth: 1 },
        encoding: { y: { datum: CONCURRENCY_LIMIT } },
      },
      {
        data: { values: inProgress },
        mark: { type: 'line', interpolate: 'step-after', strokeDash: [5, 3] },
        encoding: { x, y: { ...y, field: 'unlimited' }, color: color('in progress without a limit') },
      },
      {
        data: { values: inProgress },
        mark: { type: 'line', interpolate: 'step-after', strokeWidth: 2 },
        encoding: { x, y: { ...y, field: 'admitted' }, color: color('in progress') },
      },
      {
        data: { values: refusedAtSec.map((atSec) => ({ atSec })) },
        mark: { type: 'point', shape: 'triangle-up', filled: true, opacity: 1, size: 45, yOffset: -5 },
        encoding: { x, y: { datum: 0 }, color: color('refused request') },
      },
      {
        data: { values: [{}] },
        mark: {
          type: 'text',
          align: 'left',
          dx: 4,
          dy: -7,
          fontSize: 11,
          text: `limit: ${CONCURRENCY_LIMIT}`,
        },
        encoding: { x: { datum: 0 }, y: { datum: CONCURRENCY_LIMIT } },
      },
    ],
  };
}

/** `0.3 s to 2.6 s`: the shortest and longest of `ms`. */
function secondsRange(ms: readonly number[]): string {
  return `${Math.min(...ms) / 1000} s to ${Math.max(...ms) / 1000} s`;
}
