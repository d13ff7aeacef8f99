/** The result table: one row per store, in columns that line up. */
import type { BurstTally } from './burst.js';

/** One row: a store that was measured, or one that was skipped and why. */
export type ResultRow =
  | { readonly store: string; readonly expectedAllowed: number; readonly tally: BurstTally }
  | { readonly store: string; readonly skipped: string };

const HEADINGS = ['store', 'expected', 'allowed', '429', 'errors', 'allowed per process'] as const;

/**
 * The rows as text, one line each under a heading line.
 *
 * @example
 * console.log(formatTable([{ store: 'MemoryStore', expectedAllowed: 30, tally }]));
 */
export function formatTable(rows: readonly ResultRow[]): string {
  const cells = rows.map((row) =>
    'skipped' in row
      ? [row.store, '-', '-', '-', '-', `skipped: ${row.skipped}`]
      : [
          row.store,
          String(row.expectedAllowed),
          String(row.tally.allowed),
          String(row.tally.limited),
          String(row.tally.failed),
          row.tally.allowedByUpstream.join(' + '),
        ],
  );
  const widths = HEADINGS.map((heading, column) =>
    Math.max(heading.length, ...cells.map((line) => (line[column] ?? '').length)),
  );
  const format = (line: readonly string[]) =>
    line
      .map((cell, column) => {
        // Text columns align left, counts right, like a spreadsheet.
        const width = widths[column] ?? 0;
        return column === 0 || column === line.length - 1 ? cell.padEnd(width) : cell.padStart(width);
      })
      .join('   ')
      .trimEnd();
  return [format(HEADINGS), ...cells.map(format)].join('\n');
}
