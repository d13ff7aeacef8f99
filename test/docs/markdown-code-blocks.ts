/** Reads the fenced code blocks of a Markdown file, with the `<!-- snippet: … -->` marker before each. */

/** A fenced code block: its language, its code (fence indentation removed) and where it sits. */
export interface CodeBlock {
  /** The line of the opening fence, 1-based. The code's first line is `line + 1`. */
  readonly line: number;
  /** The info string's first word, lower-cased: `ts`, `js`, `sh`, or `''`. */
  readonly lang: string;
  /** The code, each line without the opening fence's indentation (a block inside a list item). */
  readonly code: string;
  /** How many columns of indentation were removed from each line. */
  readonly indent: number;
  /** What the `<!-- snippet: … -->` comment right before the fence says (blank lines between allowed). */
  readonly marker: string | undefined;
}

const OPENING = /^( *)(`{3,}|~{3,})\s*([^\s`]*)/;
const MARKER = /^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$/;

/** Every fenced code block of `markdown`, in order. */
export function codeBlocksOf(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const opening = OPENING.exec(lines[index] ?? '');
    if (opening === null) continue;
    const [, spaces = '', fence = '', info = ''] = opening;
    const closing = new RegExp(`^ *${fence[0]}{${fence.length},}\\s*$`);
    let end = index + 1;
    while (end < lines.length && !closing.test(lines[end] ?? '')) end++;
    blocks.push({
      line: index + 1,
      lang: info.toLowerCase(),
      code: lines
        .slice(index + 1, end)
        .map((line) => line.slice(Math.min(spaces.length, line.length - line.trimStart().length)))
        .join('\n'),
      indent: spaces.length,
      marker: markerBefore(lines, index),
    });
    index = end;
  }
  return blocks;
}

/** The text of the snippet marker on the last non-blank line before line `index`, if it is one. */
function markerBefore(lines: readonly string[], index: number): string | undefined {
  let previous = index - 1;
  while (previous >= 0 && (lines[previous] ?? '').trim() === '') previous--;
  return MARKER.exec(lines[previous] ?? '')?.[1];
}
