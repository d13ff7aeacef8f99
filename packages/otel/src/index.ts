/**
 * `@tollgate/otel`: OpenTelemetry metrics for Tollgate, recorded from the `tollgate:*` diagnostics
 * channels that `@tollgate/core` publishes on. Nothing is recorded, and nothing is published, until
 * {@link instrumentTollgate} subscribes.
 */
import {
  type Attributes,
  type MeterProvider,
  metrics,
  type ObservableResult,
  ValueType,
} from '@opentelemetry/api';
import {
  BREAKER_CLOSE_CHANNEL,
  BREAKER_OPEN_CHANNEL,
  type BreakerCloseEvent,
  type BreakerOpenEvent,
  DECISION_CHANNEL,
  DENY_CACHE_HIT_CHANNEL,
  type DecisionEvent,
  type DenyCacheHitEvent,
  STORE_ERROR_CHANNEL,
  type Store,
  type StoreErrorEvent,
  subscribeTollgate,
} from '@tollgate/core';

/** The instrumentation scope the instruments are created under. */
export const METER_NAME = '@tollgate/otel';

/** The instruments' names, as exporters see them (before any renaming such as Prometheus's). */
export const METRIC_NAMES = {
  decisions: 'tollgate.decisions',
  storeDuration: 'tollgate.store.duration',
  storeErrors: 'tollgate.store.errors',
  denyCacheHits: 'tollgate.deny_cache.hits',
  breakerState: 'tollgate.breaker.state',
} as const;

/**
 * Store durations are mostly under a millisecond on a local Redis and at most the limiter's `timeout`
 * (`'1s'` by default); the SDK's default boundaries (0 to 10,000) would put them all in one bucket.
 */
const DURATION_BOUNDARIES_S = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

/** Options of {@link instrumentTollgate}. */
export interface TollgateMetricsOptions {
  /** Where the instruments are created. Default: the global one, `metrics.getMeterProvider()`. */
  meterProvider?: MeterProvider;
}

/** Tollgate's instruments, recording until {@link TollgateMetrics.stop}. */
export interface TollgateMetrics {
  /** Unsubscribes from the channels and stops observing breakers. Safe to call more than once. */
  stop(): void;
}

/**
 * Creates Tollgate's instruments and records into them from the diagnostics channels, for every limiter
 * and `RedisStore` in the process (any copy of `@tollgate/core`: channels are shared by name). Call it
 * once, after the OpenTelemetry SDK is set up.
 *
 * - `tollgate.decisions` (counter, `{decision}`): `tollgate.limiter`, `tollgate.outcome`,
 *   `tollgate.policy` when a policy decided, and `tollgate.near_limit: true` when the request was
 *   admitted near the limit (a policy's `nearLimit` reached; absent otherwise).
 * - `tollgate.store.duration` (histogram, `s`): time from a `consume`'s call to the store to its
 *   answer or failure; `tollgate.limiter`, and `error.type` when it failed.
 * - `tollgate.store.errors` (counter, `{error}`): `tollgate.limiter`, `tollgate.operation`, `error.type`.
 * - `tollgate.deny_cache.hits` (counter, `{hit}`): `tollgate.limiter`, `tollgate.policy`.
 * - `tollgate.breaker.state` (gauge, `1`): 1 while a `RedisStore`'s breaker is open, 0 once it has
 *   closed; `tollgate.store.prefix`. A store is observed from its first incident on.
 *
 * @example
 * import { instrumentTollgate } from '@tollgate/otel';
 * instrumentTollgate(); // after the OpenTelemetry SDK has started
 */
export function instrumentTollgate(options: TollgateMetricsOptions = {}): TollgateMetrics {
  const provider = options.meterProvider ?? metrics.getMeterProvider();
  const meter = provider.getMeter(METER_NAME);
  const decisions = meter.createCounter(METRIC_NAMES.decisions, {
    description: 'Checks of Tollgate limiters, by outcome',
    unit: '{decision}',
    valueType: ValueType.INT,
  });
  const storeDuration = meter.createHistogram(METRIC_NAMES.storeDuration, {
    description: "Time from a check's call to the rate-limit store until its answer or failure",
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BOUNDARIES_S },
  });
  const storeErrors = meter.createCounter(METRIC_NAMES.storeErrors, {
    description: 'Rate-limit store calls that failed (error, timeout, open breaker)',
    unit: '{error}',
    valueType: ValueType.INT,
  });
  const denyCacheHits = meter.createCounter(METRIC_NAMES.denyCacheHits, {
    description: 'Checks refused by the deny cache without asking the store',
    unit: '{hit}',
    valueType: ValueType.INT,
  });
  const breakerState = meter.createObservableGauge(METRIC_NAMES.breakerState, {
    description: "Whether a RedisStore's circuit breaker is open (1) or closed (0)",
    unit: '1',
    valueType: ValueType.INT,
  });

  const breakers = new Map<Store, { readonly prefix: string; open: boolean }>();
  const observeBreakers = (result: ObservableResult) => {
    for (const { prefix, open } of breakers.values()) {
      result.observe(open ? 1 : 0, { 'tollgate.store.prefix': prefix });
    }
  };
  breakerState.addCallback(observeBreakers);

  const stops = [
    subscribeTollgate(DECISION_CHANNEL, (event: DecisionEvent) => {
      decisions.add(1, decisionAttributes(event));
      // A degraded decision's time is the failure's, recorded from its store-error event.
      if (event.storeLatencyMs !== undefined && event.decision !== undefined && !event.decision.degraded) {
        storeDuration.record(event.storeLatencyMs / 1000, { 'tollgate.limiter': event.limiter });
      }
    }),
    subscribeTollgate(STORE_ERROR_CHANNEL, (event: StoreErrorEvent) => {
      const { limiter, operation, errorType } = event;
      storeErrors.add(1, {
        'tollgate.limiter': limiter,
        'tollgate.operation': operation,
        'error.type': errorType,
      });
      if (operation === 'consume' && event.storeLatencyMs !== undefined) {
        storeDuration.record(event.storeLatencyMs / 1000, {
          'tollgate.limiter': limiter,
          'error.type': errorType,
        });
      }
    }),
    subscribeTollgate(DENY_CACHE_HIT_CHANNEL, (event: DenyCacheHitEvent) => {
      denyCacheHits.add(1, { 'tollgate.limiter': event.limiter, 'tollgate.policy': event.policy });
    }),
    subscribeTollgate(BREAKER_OPEN_CHANNEL, ({ store, prefix }: BreakerOpenEvent) => {
      breakers.set(store, { prefix, open: true });
    }),
    subscribeTollgate(BREAKER_CLOSE_CHANNEL, ({ store, prefix }: BreakerCloseEvent) => {
      breakers.set(store, { prefix, open: false });
    }),
  ];

  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      for (const unsubscribe of stops) unsubscribe();
      breakerState.removeCallback(observeBreakers);
      breakers.clear();
    },
  };
}

function decisionAttributes({ limiter, policy, outcome, nearLimit }: DecisionEvent): Attributes {
  const attributes: Attributes =
    policy === undefined
      ? { 'tollgate.limiter': limiter, 'tollgate.outcome': outcome }
      : { 'tollgate.limiter': limiter, 'tollgate.policy': policy, 'tollgate.outcome': outcome };
  // Only on near-limit decisions: the series of limiters without `nearLimit` stay as they were.
  if (nearLimit) attributes['tollgate.near_limit'] = true;
  return attributes;
}
