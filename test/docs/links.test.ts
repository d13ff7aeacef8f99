/** Every relative link and `#anchor` in the READMEs and docs/ leads somewhere that exists. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, headingSlug, relativeLinksOf } from './markdown-links.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(): string[] {
  const packages = readdirSync(join(root, 'packages'))
    .map((name) => join(root, 'packages', name, 'README.md'))
    .filter((path) => existsSync(path));
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, 'docs', name));
  return [join(root, 'README.md'), ...packages, ...docs];
}

const anchorCache = new Map<string, Set<string>>();
function anchorsAt(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (anchors === undefined) {
    anchors = anchorsOf(readFileSync(path, 'utf8'));
    anchorCache.set(path, anchors);
  }
  return anchors;
}

/** What is wrong with each broken link of `file`, as `file:line → target: why`. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const link of relativeLinksOf(readFileSync(file, 'utf8'))) {
    const target = link.path === '' ? file : resolve(dirname(file), link.path);
    const where = `${relative(root, file)}:${link.line} → ${link.path}${link.anchor ? `#${link.anchor}` : ''}`;
    if (!existsSync(target)) {
      broken.push(`${where}: no such file`);
      continue;
    }
    if (link.anchor === '' || statSync(target).isDirectory() || !target.endsWith('.md')) continue;
    if (!anchorsAt(target).has(link.anchor)) broken.push(`${where}: no such heading or <a id>`);
  }
  return broken;
}

describe('links in the docs', () => {
  it.each(markdownFiles().map((path) => [relative(root, path), path]))(
    '%s: every relative link resolves',
    (_name, path) => {
      expect(brokenLinks(path)).toEqual([]);
    },
  );
});

describe('headingSlug', () => {
  it('reads headings as GitHub slugs them', () => {
    expect(headingSlug('The core API (`@tollgate/core`)')).toBe('the-core-api-tollgatecore');
    expect(headingSlug('Callbacks: `onExceeding` and `onExceeded`')).toBe(
      'callbacks-onexceeding-and-onexceeded',
    );
    expect(headingSlug('A cost no wait can cover: 403')).toBe('a-cost-no-wait-can-cover-403');
    expect(headingSlug('Redis memory: `maxmemory-policy`')).toBe('redis-memory-maxmemory-policy');
    expect(headingSlug('TOLLGATE_MISSING_IP')).toBe('tollgate_missing_ip');
    expect(headingSlug('Coming from @fastify/rate-limit')).toBe('coming-from-fastifyrate-limit');
  });

  it('numbers repeated headings and reads explicit anchors', () => {
    const anchors = anchorsOf(
      '# A\n\n## Notes\n\n## Notes\n\n<a id="kept"></a>\n\n```md\n## Not a heading\n```\n',
    );
    expect([...anchors]).toEqual(['a', 'notes', 'notes-1', 'kept']);
  });
});
