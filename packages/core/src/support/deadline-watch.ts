/**
 * Gives up on store calls that found no answer in time, without one timer per call, and without
 * mistaking a busy event loop for a silent store.
 */
import { StoreUnavailableError } from './store-error.js';

/** A call being watched: given up on once `deadlineMs` (this process's monotonic clock) has passed. */
export interface Watched {
  deadlineMs: number;
  readonly timeoutMs: number;
  readonly expired: (error: StoreUnavailableError) => void;
}

/**
 * Watches pending calls with one shared timer. A late timer means a busy process, whose answers may be
 * sitting unread in the socket: when it fires, the watch marks the time one turn of the event loop later,
 * and gives up only on calls already overdue at that mark whose answers are still missing after the next
 * poll for I/O. A call that falls due later, while the process is busy (a handler blocking the loop), is
 * judged after a poll of its own. An answer that was late because this process was busy therefore still
 * decides.
 */
export class DeadlineWatch {
  readonly #pending = new Set<Watched>();
  #timer: NodeJS.Timeout | undefined;
  #armedForMs = Number.POSITIVE_INFINITY;

  /** Starts watching: `expired` is called once `timeoutMs` has passed, unless {@link stop} comes first. */
  start(timeoutMs: number, expired: Watched['expired']): Watched {
    const watched: Watched = { deadlineMs: 0, timeoutMs, expired };
    this.add(watched);
    return watched;
  }

  /** Starts watching a call the caller made, as {@link start} does: its deadline is its timeout from now. */
  add(watched: Watched): void {
    watched.deadlineMs = performance.now() + watched.timeoutMs;
    this.#pending.add(watched);
    this.#arm(watched.deadlineMs);
  }

  /** Gives a watched call its whole timeout again from `fromMs` (`performance.now()`): it has just been sent. */
  restart(watched: Watched, fromMs: number): void {
    watched.deadlineMs = fromMs + watched.timeoutMs;
  }

  /** Stops watching; `true` if it was still watched (not yet expired). */
  stop(watched: Watched): boolean {
    return this.#pending.delete(watched);
  }

  /** `reply`, or a `StoreUnavailableError` once `timeoutMs` has passed without it. */
  watch<T>(reply: Promise<T>, timeoutMs: number): Promise<T> {
    return this.watchCall(() => reply, timeoutMs);
  }

  /**
   * The reply of `call`, made now, or a `StoreUnavailableError` once `timeoutMs` has passed without it.
   * `call` is given `renewed`, for when it writes the call again (after a NOSCRIPT): it gives the call its
   * whole timeout again from now and returns `true`, or returns `false` once the call was given up on (its
   * caller has moved on, so what is written again must change nothing).
   */
  watchCall<T>(call: (renewed: () => boolean) => Promise<T>, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const watched = this.start(timeoutMs, reject);
      const renewed = () => {
        if (!this.#pending.has(watched)) return false;
        this.restart(watched, performance.now());
        return true;
      };
      let reply: Promise<T>;
      try {
        reply = call(renewed);
      } catch (error) {
        this.stop(watched);
        throw error;
      }
      reply.then(
        (value) => this.stop(watched) && resolve(value),
        (error: unknown) => this.stop(watched) && reject(error),
      );
    });
  }

  #arm(deadlineMs: number): void {
    if (deadlineMs >= this.#armedForMs) return;
    clearTimeout(this.#timer);
    this.#armedForMs = deadlineMs;
    this.#timer = setTimeout(this.#fired, Math.max(0, deadlineMs - performance.now()));
    this.#timer.unref();
  }

  readonly #fired = (): void => {
    this.#timer = undefined;
    this.#armedForMs = Number.POSITIVE_INFINITY;
    setImmediate(this.#marked);
  };

  /** A turn after the timer: an answer that came before now is read by the poll before the verdict. */
  readonly #marked = (): void => {
    const overdueAtMs = performance.now();
    setImmediate(() => this.#judge(overdueAtMs));
  };

  /** Gives up on the calls overdue at `overdueAtMs` that are still pending; re-arms for the others. */
  #judge(overdueAtMs: number): void {
    let nextMs = Number.POSITIVE_INFINITY;
    for (const watched of this.#pending) {
      if (watched.deadlineMs > overdueAtMs) {
        nextMs = Math.min(nextMs, watched.deadlineMs);
        continue;
      }
      this.#pending.delete(watched);
      watched.expired(
        new StoreUnavailableError(`rate-limit store did not answer within ${watched.timeoutMs} ms`),
      );
    }
    if (nextMs !== Number.POSITIVE_INFINITY) this.#arm(nextMs);
  }
}
