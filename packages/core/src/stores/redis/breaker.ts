/**
 * A circuit breaker for the Redis store: after repeated failures it stops sending checks for a cooldown,
 * then lets one probe through; the first answer closes it again. An incident is reported once when it
 * starts and once when it ends, never once per request.
 */

/** Options of {@link CircuitBreaker}. */
export interface BreakerSettings {
  /** Consecutive failures that open the breaker (a store that went silent or away opens it at once). */
  readonly threshold: number;
  /** How long the breaker stays open before one probe is let through, in ms. */
  readonly cooldownMs: number;
}

/** What the breaker reports, once per incident each. */
export interface BreakerEvents {
  opened(reason: string): void;
  recovered(downForMs: number, fallbacks: number): void;
}

type BreakerState = 'closed' | 'open' | 'probing';

export class CircuitBreaker {
  readonly #settings: BreakerSettings;
  readonly #events: BreakerEvents;
  #state: BreakerState = 'closed';
  #failures = 0;
  #openedAtMs = 0;
  /** Opened because the connection was lost: the client's own reconnect closes it, with no probe. */
  #awaitingConnection = false;
  /** An incident was reported and its end not yet. */
  #incident = false;
  #incidentStartMs = 0;
  #fallbacks = 0;

  constructor(settings: BreakerSettings, events: BreakerEvents) {
    this.#settings = settings;
    this.#events = events;
  }

  /** Whether the breaker is closed (the store is believed healthy). */
  get closed(): boolean {
    return this.#state === 'closed';
  }

  /**
   * Whether a call may be sent now. `connected: false` (the client has no connection) refuses at once
   * and opens the breaker: a call sent now would only wait in a queue.
   */
  admit(connected: boolean): boolean {
    const nowMs = performance.now();
    if (!connected) {
      if (this.#state === 'closed') this.#open('the client is not connected', nowMs);
      this.#state = 'open';
      this.#awaitingConnection = true;
    } else if (this.#state === 'closed') {
      return true;
    } else if (this.#awaitingConnection) {
      // The client reconnected, which proves Redis answers: every check may go, not just one probe
      // (the others would take the fallback meanwhile, and be counted in two places).
      this.#state = 'closed';
      this.#awaitingConnection = false;
      return true;
    } else if (this.#state === 'open' && nowMs - this.#openedAtMs >= this.#settings.cooldownMs) {
      this.#state = 'probing';
      return true;
    }
    this.#fallbacks++;
    return false;
  }

  /** The store answered: it is healthy again. */
  succeeded(): void {
    this.#failures = 0;
    this.#state = 'closed';
    if (!this.#incident) return;
    this.#incident = false;
    this.#events.recovered(performance.now() - this.#incidentStartMs, this.#fallbacks);
  }

  /** A call failed; `severe` (the store went silent or away) opens the breaker at once. */
  failed(reason: string, severe: boolean): void {
    this.#failures++;
    const nowMs = performance.now();
    if (this.#state !== 'closed') {
      this.#state = 'open'; // a failed probe, or a late failure of a call sent before the breaker opened
      this.#openedAtMs = nowMs;
    } else if (severe || this.#failures >= this.#settings.threshold) {
      this.#open(reason, nowMs);
    }
  }

  #open(reason: string, nowMs: number): void {
    this.#state = 'open';
    this.#openedAtMs = nowMs;
    if (this.#incident) return; // reopened before it recovered: the same incident
    this.#incident = true;
    this.#incidentStartMs = nowMs;
    this.#fallbacks = 0;
    this.#events.opened(reason);
  }
}
