/**
 * The demo's live view (`pnpm demo -- --stats`): once a second, one line of what the limiters decided,
 * counted from the `tollgate:decision` diagnostics channel. It counts decisions, not requests: a request
 * that two limiters check is two. Nothing is printed for a quiet second.
 */
import { DECISION_CHANNEL, type DecisionOutcome, subscribeTollgate } from '@tollgate/core';

/** Decisions counted since the last line. */
export interface DecisionCounter {
  /**
   * The line for the decisions since the last call, and a fresh count; `undefined` when there were none.
   * `12:00:01  allowed 20  limited 35  degraded 0  (limited by site 30, login 5)`
   */
  takeLine(now?: Date): string | undefined;
  /** Stops counting. */
  stop(): void;
}

/**
 * Counts every decision of every limiter in this process from now on.
 *
 * @example
 * const counter = countDecisions();
 * // … requests …
 * console.log(counter.takeLine());
 */
export function countDecisions(): DecisionCounter {
  let byOutcome = new Map<DecisionOutcome, number>();
  let limitedBy = new Map<string, number>();
  const stop = subscribeTollgate(DECISION_CHANNEL, ({ outcome, limiter }) => {
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    if (outcome === 'limited' || outcome === 'dry-run-limited') {
      limitedBy.set(limiter, (limitedBy.get(limiter) ?? 0) + 1);
    }
  });
  return {
    takeLine(now = new Date()) {
      if (byOutcome.size === 0) return undefined;
      const count = (outcome: DecisionOutcome) => byOutcome.get(outcome) ?? 0;
      const parts = [
        now.toTimeString().slice(0, 8),
        `allowed ${count('allowed')}`,
        `limited ${count('limited')}`,
        `degraded ${count('degraded')}`,
      ];
      if (count('dry-run-limited') > 0) parts.push(`dry-run-limited ${count('dry-run-limited')}`);
      if (limitedBy.size > 0) {
        parts.push(`(limited by ${[...limitedBy].map(([name, n]) => `${name} ${n}`).join(', ')})`);
      }
      byOutcome = new Map();
      limitedBy = new Map();
      return parts.join('  ');
    },
    stop,
  };
}

/**
 * Prints a line of {@link countDecisions} every `intervalMs`; returns the function that stops it. The
 * timer never keeps the process alive.
 *
 * @example
 * if (process.argv.includes('--stats')) printDecisionStats();
 */
export function printDecisionStats(
  print: (line: string) => void = console.log,
  intervalMs = 1_000,
): () => void {
  const counter = countDecisions();
  const timer = setInterval(() => {
    const line = counter.takeLine();
    if (line !== undefined) print(line);
  }, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    counter.stop();
  };
}

/** Whether the demo was asked for the live view: `--stats`, or `TOLLGATE_STATS=1`. */
export function statsRequested(argv = process.argv, env = process.env): boolean {
  return argv.includes('--stats') || env.TOLLGATE_STATS === '1';
}
