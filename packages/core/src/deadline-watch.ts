/**
 * Gives up on store calls that found no answer in time, without one timer per call, and without
 * mistaking a busy event loop for a silent store.
 */
import { StoreUnavailableError } from './store-error.js';

interface Watched {
  readonly deadlineMs: number;
  readonly timeoutMs: number;
  readonly reject: (error: Error) => void;
}

/**
 * Watches pending calls with one shared timer. When it fires, the verdict waits for two turns of the
 * event loop: a late timer means a busy process, whose answers may be sitting unread in the socket, and
 * those turns read them. Only a call whose answer is still missing after that is given up on. An answer
 * that was late because this process was busy therefore still decides.
 */
export class DeadlineWatch {
  readonly #pending = new Set<Watched>();
  #timer: NodeJS.Timeout | undefined;
  #armedForMs = Number.POSITIVE_INFINITY;

  /** `reply`, or a `StoreUnavailableError` once `timeoutMs` has passed without it. */
  watch<T>(reply: Promise<T>, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const watched: Watched = { deadlineMs: performance.now() + timeoutMs, timeoutMs, reject };
      this.#pending.add(watched);
      this.#arm(watched.deadlineMs);
      reply.then(
        (value) => this.#pending.delete(watched) && resolve(value),
        (error: unknown) => this.#pending.delete(watched) && reject(error),
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
    setImmediate(() => setImmediate(this.#judge));
  };

  readonly #judge = (): void => {
    const nowMs = performance.now();
    let nextMs = Number.POSITIVE_INFINITY;
    for (const watched of this.#pending) {
      if (watched.deadlineMs > nowMs) {
        nextMs = Math.min(nextMs, watched.deadlineMs);
        continue;
      }
      this.#pending.delete(watched);
      watched.reject(
        new StoreUnavailableError(`rate-limit store did not answer within ${watched.timeoutMs} ms`),
      );
    }
    if (nextMs !== Number.POSITIVE_INFINITY) this.#arm(nextMs);
  };
}
