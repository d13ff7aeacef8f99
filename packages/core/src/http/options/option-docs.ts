/** The options tables in the adapters' READMEs, generated from the option table so the two cannot drift. */

import { TollgateError } from '../../support/tollgate-error.js';
import { OPTION_NAMES, OPTION_TABLE, type OptionName } from './option-table.js';

/** How one adapter's README writes its request, and the defaults that adapter sets itself. */
export interface OptionsDocStyle {
  /** The request's parameter name in signatures: `'req'`, `'request'`, `'ctx'`. */
  readonly requestName: string;
  /** The framework's request type: `'Request'`, `'FastifyRequest'`, `'Context'`. */
  readonly requestType: string;
  /** What `requestWasSuccessful` gets besides the request, as signatures name it: `'res'`, `'reply'`. */
  readonly responseName: string;
  /** Defaults the adapter changes, as its README shows them (Fastify's logger). */
  readonly defaults?: Partial<Record<OptionName, string>>;
}

/** The line before a README's generated table. */
export const OPTIONS_TABLE_START =
  '<!-- options-table: generated from packages/core/src/http/options/option-table.ts; `pnpm --filter @tollgate/core docs:options` rewrites it -->';
/** The line after it. */
export const OPTIONS_TABLE_END = '<!-- /options-table -->';

/**
 * The Markdown table of every shared option: name, what it does, type and default.
 *
 * @example
 * optionsTableMarkdown({ requestName: 'req', requestType: 'Request', responseName: 'res' });
 * // "| option | what it does | type | default |\n| --- | …"
 */
export function optionsTableMarkdown(style: OptionsDocStyle): string {
  const cell = (markdown: string) =>
    markdown
      .replaceAll('{req}', style.requestName)
      .replaceAll('{res}', style.responseName)
      .replaceAll('{Req}', style.requestType)
      .replaceAll('|', '\\|');
  const rows = OPTION_NAMES.map((name) => {
    const { doc, type, default: fallback } = OPTION_TABLE[name];
    return `| \`${name}\` | ${cell(doc)} | ${cell(type)} | ${cell(style.defaults?.[name] ?? fallback)} |`;
  });
  return ['| option | what it does | type | default |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/**
 * `readme` with the table between its options-table markers regenerated. Throws when the markers are
 * missing, so a README cannot silently drop out of the check.
 *
 * @example
 * writeFileSync(path, withOptionsTable(readFileSync(path, 'utf8'), style));
 */
export function withOptionsTable(readme: string, style: OptionsDocStyle): string {
  const start = readme.indexOf(OPTIONS_TABLE_START);
  const end = readme.indexOf(OPTIONS_TABLE_END, start);
  if (start === -1 || end === -1) {
    throw new TollgateError(
      'TOLLGATE_INTERNAL',
      `no options table: mark it with ${OPTIONS_TABLE_START} and ${OPTIONS_TABLE_END}`,
    );
  }
  const table = optionsTableMarkdown(style);
  // Blank lines around the table keep every Markdown renderer from reading the markers as part of it.
  return `${readme.slice(0, start)}${OPTIONS_TABLE_START}\n\n${table}\n\n${readme.slice(end)}`;
}
