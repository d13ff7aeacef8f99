/**
 * Where this process's clock stands against the Redis server's, as an upper bound, so a script can be
 * given a deadline on the server's clock that is never earlier than the caller's own.
 */

/** How long one round of samples counts; the bound follows the server's clock if it steps. */
const ROUND_MS = 30_000;

/**
 * Every answer bounds the offset from above: the script read the server's clock after the call was
 * sent, so `serverNow - sentAt >= serverClock - localClock`. The smallest of recent samples is the
 * tightest bound. Samples expire after one to two rounds, so a server clock that steps forward is
 * followed; a deadline found too early because of such a step makes the caller {@link forget} the
 * samples at once.
 */
export class ServerClockOffset {
  #currentMs = Number.POSITIVE_INFINITY;
  #previousMs = Number.POSITIVE_INFINITY;
  #roundStartMs = performance.now();

  /** Records an answer: the server's clock when it ran, and `Date.now()` when the call was sent. */
  sample(serverNowMs: number, sentAtMs: number): void {
    const nowMs = performance.now();
    if (nowMs - this.#roundStartMs >= ROUND_MS) {
      this.#previousMs = this.#currentMs;
      this.#currentMs = Number.POSITIVE_INFINITY;
      this.#roundStartMs = nowMs;
    }
    this.#currentMs = Math.min(this.#currentMs, serverNowMs - sentAtMs);
  }

  /** `serverClock - localClock` or more; `undefined` before the first answer. */
  upperBoundMs(): number | undefined {
    const bound = Math.min(this.#currentMs, this.#previousMs);
    return Number.isFinite(bound) ? bound : undefined;
  }

  /** Drops every sample: the next answer starts the bound afresh. */
  forget(): void {
    this.#currentMs = Number.POSITIVE_INFINITY;
    this.#previousMs = Number.POSITIVE_INFINITY;
  }
}
