/**
 * The instruments, their names, units and attributes, read back through the OpenTelemetry SDK's in-memory
 * exporter after real checks of core and HTTP limiters (and breaker events as a RedisStore publishes them).
 */
import { channel } from 'node:diagnostics_channel';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BREAKER_CLOSE_CHANNEL,
  BREAKER_OPEN_CHANNEL,
  createLimiter,
  MemoryStore,
  type Store,
} from '@tollgate/core';
import { createHttpLimiter } from '@tollgate/core/adapter';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { instrumentTollgate, METER_NAME, METRIC_NAMES, type TollgateMetrics } from '../src/index.js';

let exporter: InMemoryMetricExporter;
let reader: PeriodicExportingMetricReader;
let provider: MeterProvider;
let instrumentation: TollgateMetrics;

beforeEach(() => {
  exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exported by hand (forceFlush), never on the interval.
  reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  provider = new MeterProvider({ readers: [reader] });
  instrumentation = instrumentTollgate({ meterProvider: provider });
});

afterEach(async () => {
  instrumentation.stop();
  await provider.shutdown();
});

/** The metrics exported now, by name. */
async function collected(): Promise<Map<string, MetricData>> {
  await reader.forceFlush();
  const exported = exporter.getMetrics().at(-1);
  const scope = exported?.scopeMetrics.find((s) => s.scope.name === METER_NAME);
  return new Map((scope?.metrics ?? []).map((metric) => [metric.descriptor.name, metric]));
}

/** Each data point's attributes and value (a histogram's count), sorted for comparison. */
function points(metric: MetricData | undefined): { attributes: object; value: unknown }[] {
  return (metric?.dataPoints ?? [])
    .map((point) => ({
      attributes: point.attributes,
      value: typeof point.value === 'number' ? point.value : (point.value as { count: number }).count,
    }))
    .sort((a, b) => JSON.stringify(a.attributes).localeCompare(JSON.stringify(b.attributes)));
}

/** A memory store that says it is remote, so the limiter keeps a deny cache in front of it. */
function remoteStore(): Store {
  const inner = new MemoryStore();
  return { update: (request) => inner.update(request), reset: (key, p) => inner.reset(key, p) };
}

const failing: Store = { update: () => Promise.reject(new Error('down')), reset: async () => {} };

describe('instrumentTollgate', () => {
  it('creates the documented instruments, with their types and units', async () => {
    await createLimiter({ policies: { limit: 1, window: '1m' }, namespace: 'a', store: failing }).consume(
      'x',
    );
    const cached = createLimiter({
      policies: { limit: 1, window: '1m' },
      namespace: 'b',
      store: remoteStore(),
    });
    for (let i = 0; i < 3; i++) await cached.consume('x');
    channel(BREAKER_OPEN_CHANNEL).publish({ store: failing, prefix: 'tollgate:', reason: 'down' });
    const metrics = await collected();
    const shape = (name: string) => {
      const descriptor = metrics.get(name)?.descriptor;
      return [descriptor?.unit, metrics.get(name)?.dataPointType];
    };
    expect(shape(METRIC_NAMES.decisions)).toEqual(['{decision}', DataPointType.SUM]);
    expect(shape(METRIC_NAMES.storeDuration)).toEqual(['s', DataPointType.HISTOGRAM]);
    expect(shape(METRIC_NAMES.storeErrors)).toEqual(['{error}', DataPointType.SUM]);
    expect(shape(METRIC_NAMES.denyCacheHits)).toEqual(['{hit}', DataPointType.SUM]);
    expect(shape(METRIC_NAMES.breakerState)).toEqual(['1', DataPointType.GAUGE]);
    for (const counter of [METRIC_NAMES.decisions, METRIC_NAMES.storeErrors, METRIC_NAMES.denyCacheHits]) {
      expect((metrics.get(counter) as { isMonotonic?: boolean }).isMonotonic, counter).toBe(true);
    }
    expect(METRIC_NAMES).toEqual({
      decisions: 'tollgate.decisions',
      storeDuration: 'tollgate.store.duration',
      storeErrors: 'tollgate.store.errors',
      denyCacheHits: 'tollgate.deny_cache.hits',
      breakerState: 'tollgate.breaker.state',
    });
  });

  it('counts decisions by limiter, policy and outcome', async () => {
    const limiter = createLimiter({ policies: { limit: 2, window: '1m', name: 'burst' }, namespace: 'api' });
    for (let i = 0; i < 3; i++) await limiter.consume('ip:203.0.113.7');
    await limiter.consume('ip:203.0.113.7', { dryRun: true });
    await createLimiter({ policies: { limit: 1, window: '1m' }, namespace: 'jobs', store: failing }).consume(
      'x',
    );
    const skipping = createHttpLimiter(
      { limit: 1, window: '1m', name: 'site', skip: () => true },
      { ip: () => '203.0.113.7', socketIp: () => '203.0.113.7', header: () => undefined },
      { adapter: 'test' },
    );
    await skipping.check({});
    const metrics = await collected();
    expect(points(metrics.get(METRIC_NAMES.decisions))).toEqual([
      {
        attributes: { 'tollgate.limiter': 'api', 'tollgate.outcome': 'allowed', 'tollgate.policy': 'burst' },
        value: 2,
      },
      {
        attributes: {
          'tollgate.limiter': 'api',
          'tollgate.outcome': 'dry-run-limited',
          'tollgate.policy': 'burst',
        },
        value: 1,
      },
      {
        attributes: { 'tollgate.limiter': 'api', 'tollgate.outcome': 'limited', 'tollgate.policy': 'burst' },
        value: 1,
      },
      {
        attributes: {
          'tollgate.limiter': 'jobs',
          'tollgate.outcome': 'degraded',
          'tollgate.policy': '1-per-1m',
        },
        value: 1,
      },
      { attributes: { 'tollgate.limiter': 'site', 'tollgate.outcome': 'skipped' }, value: 1 },
    ]);
  });

  it('marks decisions admitted near the limit with tollgate.near_limit, and only those', async () => {
    const limiter = createLimiter({
      policies: { limit: 3, window: '1m', name: 'burst', nearLimit: 0.6 },
      namespace: 'api',
    });
    for (let i = 0; i < 4; i++) await limiter.consume('ip:203.0.113.7');
    const metrics = await collected();
    expect(points(metrics.get(METRIC_NAMES.decisions))).toEqual([
      {
        attributes: {
          'tollgate.limiter': 'api',
          'tollgate.near_limit': true,
          'tollgate.outcome': 'allowed',
          'tollgate.policy': 'burst',
        },
        value: 2,
      },
      {
        attributes: { 'tollgate.limiter': 'api', 'tollgate.outcome': 'allowed', 'tollgate.policy': 'burst' },
        value: 1,
      },
      {
        attributes: { 'tollgate.limiter': 'api', 'tollgate.outcome': 'limited', 'tollgate.policy': 'burst' },
        value: 1,
      },
    ]);
  });

  it('records store durations in seconds, failures with error.type, and counts store errors', async () => {
    const limiter = createLimiter({ policies: { limit: 5, window: '1m' }, namespace: 'api' });
    await limiter.consume('a');
    await limiter.consume('b');
    const down = createLimiter({ policies: { limit: 5, window: '1m' }, namespace: 'jobs', store: failing });
    await down.consume('a');
    await expect(down.refund('a')).rejects.toThrow('down');
    const metrics = await collected();
    expect(points(metrics.get(METRIC_NAMES.storeDuration))).toEqual([
      { attributes: { 'tollgate.limiter': 'api' }, value: 2 },
      { attributes: { 'error.type': 'Error', 'tollgate.limiter': 'jobs' }, value: 1 },
    ]);
    const durations = metrics.get(METRIC_NAMES.storeDuration)?.dataPoints[0]?.value as { max?: number };
    expect(durations.max).toBeLessThan(1); // seconds, not milliseconds
    expect(points(metrics.get(METRIC_NAMES.storeErrors))).toEqual([
      {
        attributes: { 'error.type': 'Error', 'tollgate.limiter': 'jobs', 'tollgate.operation': 'consume' },
        value: 1,
      },
      {
        attributes: { 'error.type': 'Error', 'tollgate.limiter': 'jobs', 'tollgate.operation': 'refund' },
        value: 1,
      },
    ]);
  });

  it('counts deny-cache hits by limiter and policy', async () => {
    const limiter = createLimiter({
      policies: { limit: 1, window: '1m', name: 'slow' },
      namespace: 'api',
      store: remoteStore(),
    });
    for (let i = 0; i < 4; i++) await limiter.consume('a');
    const metrics = await collected();
    expect(points(metrics.get(METRIC_NAMES.denyCacheHits))).toEqual([
      { attributes: { 'tollgate.limiter': 'api', 'tollgate.policy': 'slow' }, value: 2 },
    ]);
  });

  it('reports each breaker as 1 while open and 0 once closed, by store prefix', async () => {
    const first = remoteStore();
    const second = remoteStore();
    channel(BREAKER_OPEN_CHANNEL).publish({ store: first, prefix: 'app:', reason: 'down' });
    channel(BREAKER_OPEN_CHANNEL).publish({ store: second, prefix: 'jobs:', reason: 'down' });
    channel(BREAKER_CLOSE_CHANNEL).publish({
      store: second,
      prefix: 'jobs:',
      downForMs: 1_000,
      fallbacks: 3,
    });
    const metrics = await collected();
    expect(points(metrics.get(METRIC_NAMES.breakerState))).toEqual([
      { attributes: { 'tollgate.store.prefix': 'app:' }, value: 1 },
      { attributes: { 'tollgate.store.prefix': 'jobs:' }, value: 0 },
    ]);
  });

  it('records nothing after stop', async () => {
    instrumentation.stop();
    instrumentation.stop();
    await createLimiter({ policies: { limit: 1, window: '1m' } }).consume('a');
    const metrics = await collected();
    expect(points(metrics.get(METRIC_NAMES.decisions))).toEqual([]);
  });
});
