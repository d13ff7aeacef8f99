/** Prints the bench's results as Markdown tables (so a run can be pasted into the README as it is). */
import { cpus } from 'node:os';
import type { BuildRatio, RoundRatio } from './against.js';
import { FRAMEWORKS, SCENARIOS, variantLabel } from './apps/scenarios.js';
import type { CoreResults, RedisCoreRow } from './core/core-results.js';
import type { CellSummary, GoalCheck } from './http-summary.js';

/** Where and how the figures were taken. */
export interface RunContext {
  readonly date: string;
  readonly node: string;
  readonly redis: string;
  readonly load: string;
  readonly pinned: boolean;
  readonly quick: boolean;
  readonly rounds: number;
  readonly roundSec: number;
  readonly connections: number;
  readonly seed: number;
  /** 1-minute load averages when the run started and ended: other work on the machine makes figures noisier. */
  readonly loadAverages: readonly [number, number];
  /** `--against`: which checkout and commit each of the two builds is. */
  readonly builds?: { readonly this: string; readonly against: string } | undefined;
}

export function contextLines(c: RunContext): string {
  const placement = c.pinned
    ? 'app server (and core rows) pinned to CPU 0; load generator, Redis and the bench on CPU 1'
    : 'no pinning (taskset missing or a single core): figures are less comparable';
  return [
    ...(c.builds ? [`Builds: this ${c.builds.this}; against ${c.builds.against}.`] : []),
    `${c.date}, Node ${c.node}, Redis ${c.redis}, ${c.load}, ${placement}.`,
    `Load average (1 min) ${c.loadAverages[0].toFixed(1)} at the start, ${c.loadAverages[1].toFixed(1)} at the end, on ${cpus().length} cores.`,
    `${c.quick ? '--quick: ' : ''}${c.rounds} rounds × ${c.roundSec} s per variant, ${c.connections} connections, ` +
      `variants interleaved in a shuffled order (seed ${c.seed}); medians over rounds.`,
  ].join('\n');
}

const HTTP_HEADER = [
  'framework',
  'variant',
  'req/s ÷ baseline (range)',
  'p50 ms',
  'p99 ms',
  'Node µs/req',
  'Redis µs/req',
  'added µs/req (range)',
  '÷ cheapest peer',
  'Redis cmds/req',
  'scripts/req',
  'Redis reads/req',
];

/** One table per scenario, frameworks one after the other, baseline first (and `--against` rows after theirs). */
export function httpTables(rows: readonly CellSummary[]): string {
  const out: string[] = [];
  for (const scenario of SCENARIOS) {
    const lines = FRAMEWORKS.flatMap((framework) =>
      rows
        .filter((r) => r.scenario.name === scenario.name && r.framework === framework)
        .sort((a, b) => Number(b.variant === 'none') - Number(a.variant === 'none'))
        .map((r) => [
          r.framework,
          variantLabel(r.variant, r.build),
          r.variant === 'none' ? '1' : withRange(r.throughputVsBaseline, r.throughputRange, 2),
          r.p50Ms.toFixed(2),
          r.p99Ms.toFixed(2),
          r.nodeUs.toFixed(1),
          r.redisUs.toFixed(1),
          r.variant === 'none' ? '0' : withRange(r.addedUs, r.addedRange, 0),
          r.addedVsCheapestPeer === undefined ? '' : r.addedVsCheapestPeer.toFixed(2),
          r.commands.toFixed(2),
          r.scriptCalls.toFixed(2),
          r.reads.toFixed(2),
        ]),
    );
    if (lines.length > 0) out.push(`#### ${scenario.title}\n\n${markdownTable(HTTP_HEADER, lines)}`);
  }
  return out.join('\n\n');
}

/** `--against`: this build's Tollgate rows ÷ the other build's, per scenario, framework and variant. */
export function againstTable(ratios: readonly BuildRatio[]): string {
  const lines = ratios.map((r) => [
    r.scenario.title,
    r.framework,
    variantLabel(r.variant, 'this'),
    ratioCell(r.rps),
    ratioCell(r.nodeUs),
    ratioCell(r.addedUs),
    ratioCell(r.redisUs),
  ]);
  return markdownTable(
    ['scenario', 'framework', 'variant', 'req/s', 'Node µs/req', 'added µs/req', 'Redis µs/req'],
    lines,
  );
}

/** A ratio and its range over rounds, `—` where there is none to take. */
function ratioCell(ratio: RoundRatio | undefined): string {
  return ratio === undefined ? '—' : withRange(ratio.median, ratio.range, 2);
}

/** The bench's goals, each met, missed, or not judged in this run. */
export function goalTable(checks: readonly GoalCheck[]): string {
  const lines = checks.map((c) => [
    c.framework,
    c.scenario.title,
    c.goal,
    c.measured,
    c.met === undefined ? 'not judged' : c.met ? 'met' : '**missed**',
  ]);
  return markdownTable(['framework', 'scenario', 'goal (Tollgate, RedisStore)', 'measured', ''], lines);
}

/** The core-only rows: Redis against rate-limiter-flexible, then the memory store. */
export function coreTables(core: CoreResults): string {
  const redisLines = core.redis.map((row) => [
    row.label,
    Math.round(row.checksPerSec).toLocaleString('en-US'),
    vsFlexible(row, core.redis),
    row.nodeUsPerCheck.toFixed(1),
    row.redisUsPerCheck.toFixed(2),
    row.commandsPerCheck.toFixed(2),
    row.scriptCallsPerCheck.toFixed(3),
    row.readsPerCheck.toFixed(3),
  ]);
  const redisTable = markdownTable(
    [
      'check (no HTTP)',
      'checks/s',
      '÷ rate-limiter-flexible',
      'Node µs/check',
      'Redis µs/check',
      'Redis cmds/check',
      'scripts/check',
      'Redis reads/check',
    ],
    redisLines,
  );
  const { memory } = core;
  const { flood } = memory;
  const perSec = (n: number) => `${Math.round(n).toLocaleString('en-US')} checks/s`;
  const memoryTable = markdownTable(
    ['MemoryStore (no HTTP)', 'measured', 'target'],
    [
      ['one hot key', perSec(memory.hotKeyChecksPerSec), '2,000,000 checks/s'],
      [
        `${memory.spreadKeys.toLocaleString('en-US')} keys`,
        perSec(memory.spreadChecksPerSec),
        '1,000,000 checks/s',
      ],
      [
        'heap per bucket (key string included)',
        `${Math.round(memory.heapBytesPerBucket)} bytes`,
        '≤ 200 bytes',
      ],
      [
        `flood: ${flood.keys.toLocaleString('en-US')} distinct keys, maxKeys ${flood.maxKeys.toLocaleString('en-US')}`,
        `${perSec(flood.checksPerSec)}; p99.9 ${flood.p999Us.toFixed(1)} µs, worst ${(flood.maxUs / 1000).toFixed(2)} ms; ${flood.sizeAfter.toLocaleString('en-US')} keys kept`,
        '',
      ],
    ],
  );
  return `${redisTable}\n\n${memoryTable}`;
}

/** Tollgate's rows ÷ the rate-limiter-flexible row of the same shape (throughput). */
function vsFlexible(row: RedisCoreRow, rows: readonly RedisCoreRow[]): string {
  const peer = rows.find((r) => r.label === row.label.replace('Tollgate', 'rate-limiter-flexible'));
  return peer === undefined || peer === row ? '' : (row.checksPerSec / peer.checksPerSec).toFixed(2);
}

/** `0.63 (0.55–0.71)`: a median and the lowest and highest of the rounds. */
function withRange(value: number, [low, high]: readonly [number, number], digits: number): string {
  return `${value.toFixed(digits)} (${low.toFixed(digits)}–${high.toFixed(digits)})`;
}

/** A Markdown table, numeric columns right-aligned, every column padded to its widest cell. */
export function markdownTable(header: readonly string[], lines: readonly (readonly string[])[]): string {
  const numeric = header.map(
    (_, i) => lines.length > 0 && lines.every((l) => /^[\d.,×()–—\s-]*$/.test(l[i] ?? '')),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const row = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (numeric[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [row(header), rule, ...lines.map(row)].join('\n');
}
