/** Every picture of the docs: its file under `docs/images/`, and the run and chart it is made from. */
import type { TopLevelSpec } from 'vega-lite';
import { readBenchData } from './bench/bench-data.js';
import { cpuVsPeerBars, throughputBars } from './bench/bench-ratios.js';
import { algorithmsChart } from './charts/algorithms-chart.js';
import { cpuVsPeerChart, throughputChart } from './charts/bench-charts.js';
import { concurrencyChart } from './charts/concurrency-chart.js';
import { outageChart } from './charts/outage-chart.js';
import { renderSvg } from './render.js';
import { admittedByAlgorithm } from './runs/algorithms-run.js';
import { concurrencyRun } from './runs/concurrency-run.js';
import { outageRun } from './runs/outage-run.js';

/** A picture of the docs. */
export interface Picture {
  /** The file name under `docs/images/`. */
  readonly file: string;
  /** Runs what the picture shows and returns its chart. */
  readonly chart: () => Promise<TopLevelSpec>;
}

/** `docs/images/`, where the pictures are committed. */
export const IMAGES_DIR = new URL('../../images/', import.meta.url);

/**
 * Every picture, in the order `pnpm docs:plots` writes them.
 *
 * @example
 * for (const picture of PICTURES) writeFileSync(new URL(picture.file, IMAGES_DIR), await renderPicture(picture));
 */
export const PICTURES: readonly Picture[] = [
  { file: 'algorithms.svg', chart: async () => algorithmsChart(await admittedByAlgorithm()) },
  { file: 'concurrency-limit.svg', chart: async () => concurrencyChart(await concurrencyRun()) },
  { file: 'insurance-outage.svg', chart: async () => outageChart(await outageRun()) },
  {
    file: 'bench-cpu-vs-peers.svg',
    chart: async () => {
      const bench = readBenchData();
      return cpuVsPeerChart(cpuVsPeerBars(bench), bench.config);
    },
  },
  {
    file: 'bench-throughput.svg',
    chart: async () => {
      const bench = readBenchData();
      return throughputChart(throughputBars(bench), bench.config);
    },
  },
];

/** The SVG text of a picture, made now. */
export async function renderPicture(picture: Picture): Promise<string> {
  return renderSvg(await picture.chart());
}
