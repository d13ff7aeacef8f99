import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  OPTIONS_TABLE_END,
  OPTIONS_TABLE_START,
  type OptionsDocStyle,
  optionsTableMarkdown,
  withOptionsTable,
} from '../../../src/http/options/option-docs.js';
import { OPTION_NAMES } from '../../../src/http/options/option-table.js';
import { WARNING_CODES } from '../../../src/support/warnings.js';

/** How each adapter's README writes its request; Fastify's logger default is the app's. */
const ADAPTER_READMES: readonly { readonly adapter: string; readonly style: OptionsDocStyle }[] = [
  { adapter: 'express', style: { requestName: 'req', requestType: 'Request', responseName: 'res' } },
  {
    adapter: 'fastify',
    style: {
      requestName: 'request',
      requestType: 'FastifyRequest',
      responseName: 'reply',
      defaults: { logger: "`app.log` if the app's logger is on, else `console`" },
    },
  },
  { adapter: 'koa', style: { requestName: 'ctx', requestType: 'Context', responseName: 'response' } },
];

const readmePath = (pkg: string) => fileURLToPath(new URL(`../../../../${pkg}/README.md`, import.meta.url));

describe.each(ADAPTER_READMES)(
  'the options table in the README of @tollgate/$adapter',
  ({ adapter, style }) => {
    // `pnpm --filter @tollgate/core docs:options` runs this file with TOLLGATE_WRITE_DOCS=1 to rewrite the tables.
    it('is the one the option table generates', () => {
      const path = readmePath(adapter);
      const readme = readFileSync(path, 'utf8');
      const generated = withOptionsTable(readme, style);
      if (process.env.TOLLGATE_WRITE_DOCS === '1') writeFileSync(path, generated);
      else expect(readme, 'out of step: run `pnpm --filter @tollgate/core docs:options`').toBe(generated);
    });
  },
);

describe('optionsTableMarkdown', () => {
  const table = optionsTableMarkdown({
    requestName: 'ctx',
    requestType: 'Context',
    responseName: 'response',
  });
  const rows = table.split('\n').slice(2);

  it('has one row per option, in the table order', () => {
    expect(rows.map((row) => /^\| `(\w+)` \|/.exec(row)?.[1])).toEqual(OPTION_NAMES);
  });

  it("writes the adapter's request into signatures and escapes pipes inside cells", () => {
    expect(table).toContain('`KeyFunction<Context>`: `(ctx, access) => string \\| undefined \\| Promise<…>`');
    expect(table).not.toMatch(/\{req\}|\{Req\}|\{res\}/);
    expect(rows.every((row) => row.split(/(?<!\\)\|/).length === 6)).toBe(true);
  });

  it("takes the adapter's own defaults over the table's", () => {
    const withLogger = optionsTableMarkdown({
      requestName: 'request',
      requestType: 'FastifyRequest',
      responseName: 'reply',
      defaults: { logger: '`app.log`' },
    });
    expect(withLogger).toMatch(/^\| `logger` \|.*\| `app\.log` \|$/m);
  });
});

describe('withOptionsTable', () => {
  it('replaces only what lies between the markers', () => {
    const readme = `# x\n\n${OPTIONS_TABLE_START}\nold\n${OPTIONS_TABLE_END}\n\nafter\n`;
    const style = { requestName: 'req', requestType: 'Request', responseName: 'res' };
    expect(withOptionsTable(readme, style)).toBe(
      `# x\n\n${OPTIONS_TABLE_START}\n\n${optionsTableMarkdown(style)}\n\n${OPTIONS_TABLE_END}\n\nafter\n`,
    );
  });

  it('throws for a README without the markers, so none drops out of the check unnoticed', () => {
    expect(() =>
      withOptionsTable('# x\n', { requestName: 'req', requestType: 'Request', responseName: 'res' }),
    ).toThrow(/no options table/);
  });
});

describe('the warning codes in docs/errors.md', () => {
  // Its warnings part holds every code but one: TOLLGATE_STORE_UNAVAILABLE is also an error, and its one
  // entry is under the errors. (errors.test.ts checks that every entry is there once.)
  it('has an entry for every code, and no warning entry for a code that does not exist', () => {
    const page = readFileSync(
      fileURLToPath(new URL('../../../../../docs/errors.md', import.meta.url)),
      'utf8',
    );
    const [errorsPart = '', warningsPart = ''] = page.split(/^## Warnings and log lines$/m);
    const headings = (part: string) => [...part.matchAll(/^### (TOLLGATE_\w+)$/gm)].map((match) => match[1]);
    expect(new Set(headings(warningsPart))).toEqual(
      new Set(WARNING_CODES.filter((code) => code !== 'TOLLGATE_STORE_UNAVAILABLE')),
    );
    expect(headings(errorsPart)).toContain('TOLLGATE_STORE_UNAVAILABLE');
  });
});
