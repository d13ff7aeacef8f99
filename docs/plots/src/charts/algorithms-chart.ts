/** The algorithms picture: admitted and refused requests per 250 ms, one panel per algorithm. */
import type { TopLevelSpec } from 'vega-lite';
import {
  ALGORITHM_POLICIES,
  type admittedByAlgorithm,
  BIN_MS,
  type TrafficBin,
} from '../runs/algorithms-run.js';
import { TRAFFIC } from '../runs/traffic.js';

/** The y axis stops here so the steady traffic stays readable; the burst's bars are cut, and labelled. */
const Y_MAX = 24;
const COLORS = { admitted: '#4c78a8', refused: '#f2a65a' };

/**
 * The chart of {@link admittedByAlgorithm}'s bins.
 *
 * @example
 * const svg = await renderSvg(algorithmsChart(await admittedByAlgorithm()));
 */
export function algorithmsChart(bins: readonly TrafficBin[]): TopLevelSpec {
  // Stacked by hand: admitted from 0, refused on top of them; no bar where there is nothing.
  const values = bins.flatMap((bin) => {
    const toSec = bin.fromSec + BIN_MS / 1000;
    const sent = bin.admitted + bin.refused;
    return [
      { ...bin, toSec, outcome: 'admitted', low: 0, high: bin.admitted },
      { ...bin, toSec, outcome: 'refused', low: bin.admitted, high: sent },
    ].filter((bar) => bar.high > bar.low);
  });
  const limitPerBin = (10 * BIN_MS) / 1000;
  return {
    title: {
      text: 'The same traffic through each algorithm, limit 10 per second',
      subtitle: [
        `One client: ${TRAFFIC.steadyPerSec} requests/s, ${TRAFFIC.burstRequests} more at once at ` +
          `${TRAFFIC.burstAtMs / 1000} s, ${TRAFFIC.busyPerSec} requests/s from ${TRAFFIC.busyFromMs / 1000} s ` +
          `to ${TRAFFIC.busyToMs / 1000} s.`,
        `Bars: requests per ${BIN_MS} ms. Dashed line: the limit, ${limitPerBin} per ${BIN_MS} ms.`,
      ],
    },
    data: { values },
    facet: {
      row: {
        field: 'algorithm',
        sort: Object.keys(ALGORITHM_POLICIES),
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
      width: 720,
      height: 130,
      layer: [
        {
          mark: { type: 'bar', clip: true },
          encoding: {
            x: { field: 'fromSec', type: 'quantitative', title: 'time (s)', scale: { domain: [0, 30] } },
            x2: { field: 'toSec' },
            y: {
              field: 'low',
              type: 'quantitative',
              title: `requests per ${BIN_MS} ms`,
              scale: { domain: [0, Y_MAX] },
            },
            y2: { field: 'high' },
            color: {
              field: 'outcome',
              type: 'nominal',
              title: null,
              scale: { domain: Object.keys(COLORS), range: Object.values(COLORS) },
            },
          },
        },
        {
          mark: { type: 'rule', strokeDash: [4, 3], color: '#333' },
          encoding: { y: { datum: limitPerBin } },
        },
        {
          transform: [
            // One label per cut bin, on its top bar.
            { filter: `datum.high === datum.admitted + datum.refused && datum.high > ${Y_MAX}` },
            {
              calculate: "datum.admitted + datum.refused + ' sent, ' + datum.admitted + ' admitted'",
              as: 'label',
            },
          ],
          mark: { type: 'text', align: 'left', dx: 6, dy: 8, fontSize: 11 },
          encoding: {
            x: { field: 'toSec', type: 'quantitative' },
            y: { datum: Y_MAX },
            text: { field: 'label' },
          },
        },
      ],
    },
  };
}
