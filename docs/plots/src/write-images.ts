/** `pnpm docs:plots`: makes every picture of `pictures.ts` and writes it to `docs/images/`. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { IMAGES_DIR, PICTURES, renderPicture } from './pictures.js';

mkdirSync(IMAGES_DIR, { recursive: true });
for (const picture of PICTURES) {
  const file = new URL(picture.file, IMAGES_DIR);
  writeFileSync(file, await renderPicture(picture));
  console.log(`wrote ${fileURLToPath(file)}`);
}
