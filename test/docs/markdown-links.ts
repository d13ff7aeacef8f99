/** Reads the links and anchors of a Markdown file as GitHub renders it, for the docs link test. */

/** A relative link found in a Markdown file: its target path (may be empty) and `#anchor` (may be empty). */
export interface MarkdownLink {
  readonly line: number;
  readonly path: string;
  readonly anchor: string;
}

const FENCE = /^\s*(```|~~~)/;

/** The file's lines with fenced code blocks blanked, so code is never read as headings or links. */
function proseLines(markdown: string): string[] {
  let inFence = false;
  return markdown.split('\n').map((line) => {
    if (FENCE.test(line)) {
      inFence = !inFence;
      return '';
    }
    return inFence ? '' : line;
  });
}

/**
 * The slug GitHub gives a heading: its text as rendered (inline code and links reduced to their text),
 * lower-cased, with punctuation dropped and each space turned into `-`.
 */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/<[^>]+>/g, '') // inline HTML tags
    .replace(/[`*~]/g, '') // code spans and emphasis marks (underscores are kept, as GitHub keeps them)
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** Every anchor a file offers: its heading slugs (repeats get `-1`, `-2`, …) and `<a id|name>` targets. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading?.[1] !== undefined) {
      const slug = headingSlug(heading[1]);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+[^>]*?(?:id|name)\s*=\s*["']([^"']+)["']/gi)) {
      if (match[1] !== undefined) anchors.add(match[1]);
    }
  }
  return anchors;
}

/** The relative links of a file (`[text](target)` and images), leaving out web, mail and other schemes. */
export function relativeLinksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  proseLines(markdown).forEach((line, index) => {
    const prose = line.replace(/`[^`]*`/g, (span) => (span.includes('](') ? '' : span));
    for (const match of prose.matchAll(/!?\[(?:[^\]`]|`[^`]*`)*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1] ?? '';
      if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      links.push({
        line: index + 1,
        path: decodeURIComponent(hash === -1 ? target : target.slice(0, hash)),
        anchor: hash === -1 ? '' : decodeURIComponent(target.slice(hash + 1)),
      });
    }
  });
  return links;
}
