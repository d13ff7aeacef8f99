/** The outage picture: what each of three app servers admitted per second, before, during and after. */
import type { TopLevelSpec } from 'vega-lite';
import { OUTAGE, type outageRun, type ServerSecond } from '../runs/outage-run.js';

const SERVER_COLORS = ['#4c78a8', '#72b7b2', '#b279a2'];

/**
 * The chart of {@link outageRun}'s seconds, stacked by server, with the outage shaded.
 *
 * @example
 * const svg = await renderSvg(outageChart(await outageRun()));
 */
export function outageChart(seconds: readonly ServerSecond[]): TopLevelSpec {
  const servers = [...new Set(seconds.map((s) => s.server))].sort();
  // Stacked by hand, server 1 at the bottom: a bar's height is the total admitted in that second.
  const bars = [...seconds]
    .sort((a, b) => a.second - b.second || a.server.localeCompare(b.server))
    .map((s, i, all) => {
      const below = all.slice(0, i).filter((o) => o.second === s.second);
      const low = below.reduce((sum, o) => sum + o.admitted, 0);
      return { ...s, toSecond: s.second + 1, low, high: low + s.admitted };
    });
  const { limit, servers: count } = OUTAGE;
  const share = limit / count;
  const down = { from: OUTAGE.downFromMs / 1000, to: OUTAGE.downToMs / 1000 };
  const endSec = OUTAGE.durationMs / 1000;
  const yMax = 2 * limit;
  return {
    title: {
      text: `${count} app servers through an outage of the shared store`,
      subtitle: [
        `Each server sends ${OUTAGE.requestsPerSecPerServer} requests/s for one client; the limit is ${limit} ` +
          `per second for all ${count}`,
        `together (a token bucket). While the store is down, each server's insurance`,
        `limiter (insurance: { instances: ${count} }) admits ${limit} ÷ ${count} = ${share} per second on its own.`,
        'A full bucket lets a burst through: at the start, as the outage begins, and after it.',
      ],
    },
    width: 720,
    height: 260,
    layer: [
      {
        data: { values: [{ ...down, label: ['shared store down:', `${share} per second per server`] }] },
        layer: [
          {
            mark: { type: 'rect', color: '#f0f0f0' },
            encoding: { x: { field: 'from', type: 'quantitative' }, x2: { field: 'to' } },
          },
          {
            mark: { type: 'text', align: 'center', baseline: 'top', dy: 6, fontSize: 11, color: '#444' },
            encoding: {
              x: { datum: (down.from + down.to) / 2 },
              y: { datum: yMax, type: 'quantitative' },
              text: { field: 'label' },
            },
          },
        ],
      },
      {
        data: { values: bars },
        mark: { type: 'bar', stroke: 'white', strokeWidth: 0.5 },
        encoding: {
          x: { field: 'second', type: 'quantitative', title: 'time (s)', scale: { domain: [0, endSec] } },
          x2: { field: 'toSecond' },
          y: {
            field: 'low',
            type: 'quantitative',
            title: 'requests admitted per second',
            scale: { domain: [0, yMax] },
          },
          y2: { field: 'high' },
          color: {
            field: 'server',
            type: 'nominal',
            title: null,
            scale: { domain: servers, range: SERVER_COLORS },
          },
        },
      },
      {
        data: { values: [{ limit, label: `limit: ${limit}/s` }] },
        layer: [
          {
            mark: { type: 'rule', strokeDash: [5, 3], color: '#222' },
            encoding: { y: { field: 'limit', type: 'quantitative' } },
          },
          {
            // Right of the plot, where no bar can hide it.
            mark: { type: 'text', align: 'left', dx: 6, fontSize: 11 },
            encoding: {
              x: { datum: endSec },
              y: { field: 'limit', type: 'quantitative' },
              text: { field: 'label' },
            },
          },
        ],
      },
    ],
  };
}
