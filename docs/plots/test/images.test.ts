/** The committed pictures are what `pnpm docs:plots` makes from the code and data of this checkout. */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { IMAGES_DIR, PICTURES, renderPicture } from '../src/pictures.js';

describe.each(PICTURES)('docs/images/$file', (picture) => {
  const file = new URL(picture.file, IMAGES_DIR);

  it('is what pnpm docs:plots makes now', async () => {
    expect(existsSync(file), `docs/images/${picture.file} is missing: run pnpm docs:plots`).toBe(true);
    const made = await renderPicture(picture);
    // Not toBe on the texts: a diff of two SVGs says nothing a reader can act on.
    const same = made === readFileSync(file, 'utf8');
    expect(
      same,
      `docs/images/${picture.file} differs from what the code makes now: run pnpm docs:plots`,
    ).toBe(true);
  });

  it('renders to the same bytes twice in one process', async () => {
    const first = await renderPicture(picture);
    const second = await renderPicture(picture);
    expect(first === second).toBe(true);
  });
});
