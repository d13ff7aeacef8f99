/** The Redis-cost rows as Markdown: instructions per check with their ratios, and memory per client. */
import { markdownTable } from '../report.js';
import type { CostRowResult, MemoryRowResult } from './cost-types.js';

const COST_HEADER = [
  'shape',
  'check',
  'k instructions/check',
  '÷ cheapest peer',
  '÷ its floor',
  'Redis commands/check',
  'script calls/check',
];

/**
 * One table, shape by shape: each row's instructions per check (thousands), over the cheapest peer's
 * in the same shape and over its floor's (the floor script of its algorithm) in the same shape.
 */
export function costTable(rows: readonly CostRowResult[]): string {
  const lines = rows.map((row) => {
    const sameShape = rows.filter((r) => r.shape === row.shape);
    const peers = sameShape.filter((r) => r.family === 'peer').map((r) => r.instructionsPerCheck);
    const floor =
      row.family === 'floor'
        ? undefined
        : sameShape.find((r) => r.family === 'floor' && r.floor === row.floor);
    return [
      row.shape.label,
      row.label,
      (row.instructionsPerCheck / 1000).toFixed(1),
      peers.length === 0 ? '' : (row.instructionsPerCheck / Math.min(...peers)).toFixed(2),
      floor === undefined ? '' : (row.instructionsPerCheck / floor.instructionsPerCheck).toFixed(2),
      row.commandsPerCheck.toFixed(2),
      row.scriptCallsPerCheck.toFixed(3),
    ];
  });
  return markdownTable(COST_HEADER, lines);
}

/** Memory per limited client, one row per limiter. */
export function memoryTable(rows: readonly MemoryRowResult[]): string {
  const clients = rows[0]?.clients.toLocaleString('en-US') ?? '0';
  return markdownTable(
    ['limiter', `Redis bytes per client at its limit (${clients} clients)`],
    rows.map((row) => [row.label, Math.round(row.bytesPerClient).toLocaleString('en-US')]),
  );
}
