/** The bench pictures show every framework the committed run measured. */
import { describe, expect, it } from 'vitest';
import { readBenchData } from '../src/bench/bench-data.js';
import { cpuVsPeerBars, throughputBars } from '../src/bench/bench-ratios.js';
import { throughputChart } from '../src/charts/bench-charts.js';

describe('the bench pictures', () => {
  const data = readBenchData();
  const measured = new Set(data.http.map((cell) => cell.framework));

  it('name every framework of the run, each by its own name', () => {
    const named = new Set([...throughputBars(data), ...cpuVsPeerBars(data)].map((bar) => bar.framework));
    expect(named.size).toBe(measured.size);
    expect([...named].sort()).toEqual(['Express', 'Fastify', 'Hono', 'Koa', 'NestJS']);
  });

  it('give every framework of the run its own row of throughput', () => {
    const chart = throughputChart(throughputBars(data), data.config) as {
      vconcat: { title: { text: string } }[];
    };
    expect(chart.vconcat.map((row) => row.title.text)).toEqual([
      'Express',
      'Fastify',
      'Koa',
      'Hono',
      'NestJS',
    ]);
  });
});
