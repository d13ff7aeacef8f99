/**
 * The runtimes the suites here serve Tollgate on, as the registry's `bun`, `deno` and `workerd` packages
 * install them: each binary is there and runs on this platform.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const versionOf = (name: string) => (require(`${name}/package.json`) as { version: string }).version;
const binary = (name: string) => new URL(`node_modules/.bin/${name}`, import.meta.url).pathname;

describe('runtime binaries from the registry', () => {
  it.each(['bun', 'deno'])('%s runs and reports its package version', (name) => {
    expect(execFileSync(binary(name), ['--version'], { encoding: 'utf8' })).toContain(versionOf(name));
  });

  it('workerd runs and reports the date of its release', () => {
    const date = versionOf('workerd')
      .split('.')[1]
      ?.replace(/^(\d{4})(\d{2})(\d{2})$/, '$1-$2-$3');
    expect(execFileSync(binary('workerd'), ['--version'], { encoding: 'utf8' })).toContain(date);
  });
});
