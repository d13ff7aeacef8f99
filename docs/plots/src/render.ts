/**
 * The one place pictures become SVG: a Vega-Lite spec, compiled, rendered by vega's headless `View` to an
 * SVG string, with everything that could make two renders differ pinned down.
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/**
 * Text widths (for layout and label overlap) come from vega's estimate, a function of the characters and
 * the font size alone. With the `canvas` package installed, vega would measure with the fonts of the
 * machine instead, and the bytes would depend on them. `textMetrics` is exported by vega but not typed.
 */
(vega as unknown as { textMetrics: { canvas(use: boolean): void } }).textMetrics.canvas(false);

/**
 * Shared look: fixed fonts and sizes, a white background (readable on dark pages too). No ARIA text per
 * mark: the images are shown with `<img>` and described by their alt text, and it would double the size.
 * Vega sizes text by an estimate that runs wider than most fonts: subtitle lines of up to about 80
 * characters fit a 720-pixel chart without widening the image.
 */
const THEME = {
  aria: false,
  background: 'white',
  padding: 12,
  font: 'Helvetica, Arial, sans-serif',
  title: { fontSize: 15, subtitleFontSize: 11, subtitleColor: '#555', anchor: 'start', offset: 10 },
  axis: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal', gridColor: '#eee' },
  header: { labelFontSize: 12, titleFontSize: 12 },
  legend: { labelFontSize: 11, titleFontSize: 12, orient: 'top' },
  view: { stroke: '#ddd' },
} as const;

type Logger = NonNullable<NonNullable<Parameters<typeof compile>[1]>['logger']>;

/** Warnings fail the render: a spec vega-lite has to correct draws something other than it says. */
const failOnWarning: Logger = {
  level(level?: number) {
    return level === undefined ? vega.Warn : failOnWarning;
  },
  error(...args) {
    throw new Error(`vega: ${args.join(' ')}`);
  },
  warn(...args) {
    throw new Error(`vega: ${args.join(' ')}`);
  },
  info() {
    return failOnWarning;
  },
  debug() {
    return failOnWarning;
  },
};

/**
 * Renders a Vega-Lite spec to SVG text. Same spec, same bytes: data is inline, the size is fixed, no time
 * scales (their ticks would follow the machine's time zone), and vega's ids for clip paths and gradients
 * are reset before each render, so a render does not depend on those before it.
 *
 * @example
 * const svg = await renderSvg({ data: { values }, mark: 'bar', encoding: { x: { field: 'a' } } });
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const { spec: compiled } = compile({ ...spec, config: { ...THEME, ...spec.config } } as TopLevelSpec, {
    logger: failOnWarning,
  });
  vega.resetSVGDefIds();
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logger: failOnWarning });
  try {
    return `${lintClean(await view.toSVG(), titleOf(spec))}\n`;
  } finally {
    view.finalize();
  }
}

/**
 * Two touches to vega's SVG for the repository's linter, whose a11y rules read SVG files: a `<title>` (the
 * chart's), for whoever opens the file itself; and no ARIA `role` on vega's groups, which Biome takes
 * for interactive elements given a non-interactive role. Neither changes what is drawn.
 */
function lintClean(svg: string, title: string): string {
  const escaped = title.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  return svg
    .replaceAll(/ role="graphics-(?:object|symbol)"/g, '')
    .replace(/^<svg [^>]*>/, (open) => `${open}<title>${escaped}</title>`);
}

function titleOf({ title }: TopLevelSpec): string {
  const text = typeof title === 'object' && title !== null && 'text' in title ? title.text : title;
  return [text ?? ''].flat().join(' ');
}
