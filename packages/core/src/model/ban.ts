/** Bans, the type: a limiter's rules for a client that keeps knocking, decided with its policies. */

/**
 * A limiter's rules for refusals, resolved: its ban, its exponential backoff, its `continueExceeding`.
 * Made once per limiter (stores key their caches and sets by it); `undefined` when it has none of them.
 */
export interface BanRule {
  /** Refusals in a row that start a ban; 0: no ban. */
  readonly after: number;
  /** How long a ban lasts, in ms (0 with no ban). */
  readonly durationMs: number;
  /** Whether each refusal in a row doubles the wait before the next admission. Default: `false`. */
  readonly exponentialBackoff?: boolean;
  /** Whether a refused request restarts the windows it did not fit in. Default: `false`. */
  readonly continueExceeding?: boolean;
}
