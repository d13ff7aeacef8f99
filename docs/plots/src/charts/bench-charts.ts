/** The bench pictures: Tollgate's CPU beside the cheapest peer's, and every limiter's req/s beside the baseline. */
import { SCENARIOS } from '@tollgate/bench/apps/scenarios.js';
import type { TopLevelSpec } from 'vega-lite';
import type { BenchRunConfig } from '../bench/bench-data.js';
import type { RatioBar } from '../bench/bench-ratios.js';

/** One layer of a layered chart, as vega-lite types it. */
type Layer = Extract<TopLevelSpec, { layer: unknown }>['layer'][number];

const KIND_COLORS = { tollgate: '#4c78a8', peer: '#a0a0a0', floor: '#d8d8d8' };
const KIND_NAMES = { tollgate: 'Tollgate', peer: 'other limiters', floor: "Tollgate's 429, no limiter" };
const SCENARIO_TITLES = SCENARIOS.map((s) => s.title);

/** How the figures were taken, as two subtitle lines. */
function runLines({ rounds, roundSec, quick, connections }: BenchRunConfig): string[] {
  return [
    `Measured by pnpm bench${quick ? ' --quick' : ''}: ${rounds} rounds of ${roundSec} s per variant, ${connections} connections.`,
    'Bars: medians over the rounds; lines: the lowest to the highest round.',
  ];
}

/**
 * Where the x axis ends: past every bar and 1, and past the round-to-round ranges up to `cap` (noisy
 * rounds can reach far; the marks are cut at the axis, and the CPU chart prints the range too).
 */
function axisEnd(bars: readonly RatioBar[], least: number, cap: number): number {
  const widest = Math.max(least, ...bars.map((b) => b.high));
  return Math.max(least, ...bars.map((b) => b.value * 1.1), Math.min(cap, widest));
}

/** The bar, its round-to-round range (both cut at the axis's end), and a dashed line at 1. */
function ratioLayers(
  xTitle: string,
  y: { field: string; sort?: string[] },
  xMax: number,
  legend: boolean,
): Layer[] {
  const x = { type: 'quantitative' as const, title: xTitle, scale: { domain: [0, xMax] } };
  const yChannel = { ...y, type: 'nominal', title: null, axis: { labelLimit: 400 } } as const;
  // No bar where there is no ratio (the text layer of the CPU chart says so).
  const measurable = { filter: 'datum.measurable' };
  return [
    {
      transform: [measurable],
      mark: { type: 'bar', height: 14, clip: true },
      encoding: {
        x: { ...x, field: 'value' },
        y: yChannel,
        color: {
          field: 'kind',
          type: 'nominal',
          title: null,
          scale: { domain: Object.keys(KIND_COLORS), range: Object.values(KIND_COLORS) },
          legend: legend
            ? { labelExpr: `${JSON.stringify(KIND_NAMES)}[datum.label]`, labelLimit: 400 }
            : null,
        },
      },
    },
    {
      transform: [measurable],
      mark: { type: 'rule', color: '#222', clip: true },
      encoding: { x: { ...x, field: 'low' }, x2: { field: 'high' }, y: yChannel },
    },
    {
      data: { values: [{}] },
      mark: { type: 'rule', color: '#222', strokeDash: [4, 3] },
      encoding: { x: { datum: 1 } },
    },
  ];
}

/** Tollgate on Redis, added CPU per request ÷ the cheapest peer's: one panel per scenario. */
export function cpuVsPeerChart(bars: readonly RatioBar[], config: BenchRunConfig): TopLevelSpec {
  const xMax = axisEnd(bars, 1.2, 3);
  const values = bars.map((bar) => {
    const peer = bar.peer?.split(/[ ,]/)[0] ?? '';
    const range = `${ratioText(bar.low)} to ${ratioText(bar.high)}`;
    return {
      ...bar,
      label: bar.measurable
        ? `${ratioText(bar.value)} (rounds ${range}) vs ${peer}`
        : `no ratio: ${peer} added nothing measurable`,
      labelAt: Math.min(bar.high, xMax),
    };
  });
  return {
    title: {
      text: "Tollgate on Redis: CPU added per request, ÷ the cheapest peer's",
      subtitle: [
        'App server and Redis CPU per request, above the same app without a limiter, divided by that',
        'of the peer that adds the least on the same framework and scenario. Below 1: Tollgate adds less.',
        ...runLines(config),
      ],
    },
    data: { values },
    facet: {
      row: {
        field: 'scenario',
        sort: SCENARIO_TITLES,
        header: {
          title: null,
          labelAngle: 0,
          labelOrient: 'top',
          labelAnchor: 'start',
          labelFontWeight: 'bold',
        },
      },
    },
    spec: {
      width: 520,
      height: { step: 24 },
      layer: [
        ...ratioLayers("added CPU per request ÷ the cheapest peer's", { field: 'framework' }, xMax, false),
        {
          mark: { type: 'text', align: 'left', dx: 6, fontSize: 11 },
          encoding: {
            x: { field: 'labelAt', type: 'quantitative' },
            y: { field: 'framework', type: 'nominal' },
            text: { field: 'label' },
          },
        },
      ],
    },
  };
}

/** Every variant's req/s ÷ its framework's baseline: a row of scenarios per framework. */
export function throughputChart(bars: readonly RatioBar[], config: BenchRunConfig): TopLevelSpec {
  const xMax = axisEnd(bars, 1.1, 2);
  // Tollgate's rows first (in the bench's order), then the peers, the floor last.
  const rank = ['tollgate', 'peer', 'floor'];
  const variants = [
    ...new Set([...bars].sort((a, b) => rank.indexOf(a.kind) - rank.indexOf(b.kind)).map((b) => b.variant)),
  ];
  // Every framework the run measured, in the bench's order.
  const frameworks = [...new Set(bars.map((b) => b.framework))];
  return {
    title: {
      text: 'Requests per second, ÷ the same app without a limiter',
      subtitle: [
        '1: the limiter costs no throughput. Each framework beside its own baseline.',
        ...runLines(config),
      ],
    },
    data: { values: bars },
    vconcat: frameworks.map((framework) => ({
      title: { text: framework, fontSize: 13 },
      transform: [{ filter: { field: 'framework', equal: framework } }],
      facet: {
        column: {
          field: 'scenario',
          sort: SCENARIO_TITLES,
          header: { title: null, labelFontWeight: 'bold' },
        },
      },
      spec: {
        width: 170,
        height: { step: 20 },
        layer: ratioLayers('req/s ÷ baseline', { field: 'variant', sort: variants }, xMax, true),
      },
    })),
  };
}

/** `0.86`, `−0.71`: two decimals, with a true minus sign. */
function ratioText(ratio: number): string {
  return ratio.toFixed(2).replace('-', '−');
}
