/** Bans, the type: a limiter's rule for refusing a client outright after refusals in a row. */

/** A limiter's ban rule, resolved. */
export interface BanRule {
  /** Refusals in a row that start a ban. */
  readonly after: number;
  /** How long a ban lasts, in ms. */
  readonly durationMs: number;
}
