/**
 * Vitest setup, before each suite: stops the run unless the test apps of `test/frameworks` and the source
 * of `@tollgate/nestjs` got this package's Nest 12. On `test/`'s Nest 11 they would pass here, unseen.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { HttpException } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { RateLimitException } from '@tollgate/nestjs';
import { nestPlatforms } from '../frameworks/nestjs-apps.js';

const require = createRequire(import.meta.url);
const NEST_PACKAGES = ['common', 'core', 'platform-express', 'platform-fastify', 'testing'];

/** The version of `@nestjs/${name}` (`@nestjs/testing` exports no `./package.json`: read beside its entry). */
function versionOf(name: string): string {
  const manifest = join(dirname(require.resolve(`@nestjs/${name}`)), 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

const wrong = NEST_PACKAGES.flatMap((name) => {
  const version = versionOf(name);
  return version.startsWith('12.') ? [] : [`@nestjs/${name} is ${version}`];
});
const [express, fastify] = nestPlatforms;
if (
  !(express?.adapter(false) instanceof ExpressAdapter) ||
  !(fastify?.adapter(false) instanceof FastifyAdapter)
)
  wrong.push("test/frameworks/nestjs-apps.ts has another Nest's platform adapters");
if (!(RateLimitException.prototype instanceof HttpException))
  wrong.push("@tollgate/nestjs has another Nest's HttpException");
if (wrong.length > 0) throw new Error(`Not on this package's Nest 12: ${wrong.join('; ')}`);
