/** The request stream of the algorithms picture: one client, steady, with a burst and a busy stretch. */

/** What the client sends over the run. */
export const TRAFFIC = {
  durationMs: 30_000,
  /** Below the limit of 10 per second: every algorithm admits all of it. */
  steadyPerSec: 8,
  /** Requests sent at once, on top of the steady stream. */
  burstRequests: 60,
  burstAtMs: 10_000,
  /** A stretch at twice the limit, instead of the steady stream. */
  busyPerSec: 20,
  busyFromMs: 20_000,
  busyToMs: 25_000,
} as const;

/**
 * When each request is sent, in ms from the start of the run, in order: every `1000 / steadyPerSec` ms,
 * every `1000 / busyPerSec` ms in the busy stretch, and `burstRequests` more at `burstAtMs`.
 *
 * @example
 * arrivalTimesMs().slice(0, 3); // [0, 125, 250]
 */
export function arrivalTimesMs(): number[] {
  const times: number[] = [];
  for (let atMs = 0; atMs < TRAFFIC.durationMs; ) {
    times.push(atMs);
    if (atMs === TRAFFIC.burstAtMs) {
      for (let i = 0; i < TRAFFIC.burstRequests; i++) times.push(atMs);
    }
    const busy = atMs >= TRAFFIC.busyFromMs && atMs < TRAFFIC.busyToMs;
    atMs += 1000 / (busy ? TRAFFIC.busyPerSec : TRAFFIC.steadyPerSec);
  }
  return times;
}
