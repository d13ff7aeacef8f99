import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  GENERATED_PATH,
  REGENERATE,
  settleScriptLua,
  settleScriptModule,
} from '../../src/stores/redis/script/generate.js';
import {
  LEASE_SCRIPT,
  OVERRIDABLE_CHECK_SCRIPTS,
  OVERRIDE_SCRIPT,
  POLICIES_CHECK_SCRIPT,
  SETTLE_SCRIPT,
  SINGLE_CHECK_SCRIPTS,
} from '../../src/stores/redis/script/wire.js';

const writing = process.env.TOLLGATE_WRITE_LUA === '1';
const generatedPath = fileURLToPath(new URL(`../../${GENERATED_PATH}`, import.meta.url));

describe('the settle script Redis runs', () => {
  // `pnpm --filter @tollgate/core lua:write` runs this file with TOLLGATE_WRITE_LUA=1 to rewrite it.
  it('is committed exactly as generate.ts makes it from the algorithms’ Lua', () => {
    const generated = settleScriptModule();
    if (writing) writeFileSync(generatedPath, generated);
    else expect(readFileSync(generatedPath, 'utf8'), `out of step: run \`${REGENERATE}\``).toBe(generated);
  });

  it.skipIf(writing)('is the committed text, as the store sends it', () => {
    expect(SETTLE_SCRIPT.source).toBe(settleScriptLua());
    expect(SETTLE_SCRIPT.sha1).toBe(createHash('sha1').update(settleScriptLua()).digest('hex'));
  });

  // A change here is a change in what every Redis runs: servers of two versions sharing one Redis run
  // both scripts side by side, so say in the changeset whether the stored values and answers still agree.
  it.skipIf(writing)('has the SHA pinned here', () => {
    expect(SETTLE_SCRIPT.sha1).toBe('6d3d84e529b8740e6dc46befbe32bf168fff09cd');
  });
});

describe('the single-check scripts Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    expect(
      Object.fromEntries(Object.entries(SINGLE_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1])),
    ).toEqual({
      'token-bucket': '76171b4604ae3199c09b0b0f3dfdf1423e4a2a36',
      'fixed-window': '710ec386cfcd85cca07144cbc6b03ee0879f5c98',
      'sliding-window': '18160978667351efba8493817f1104126ee3386a',
    });
  });
});

describe('the single-check scripts that read overrides', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(OVERRIDABLE_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': 'be585d3f084a86b0d045fcade46bd7f87023c9eb',
      'fixed-window': 'c39daf2542544807bcc74fa7a6047b8e3bff2391',
      'sliding-window': '93fc5e53d1ce1d6f7c4eba54f1b4c3805955d959',
    });
  });
});

describe('the single-check script of several policies Redis runs', () => {
  it.skipIf(writing)('has its SHA pinned here', () => {
    expect(POLICIES_CHECK_SCRIPT.sha1).toBe('2845d5f93ed1119d54441ff69f85ff839736d1d7');
  });
});

describe('the override script Redis runs', () => {
  it('has the SHA pinned here', () => {
    expect(OVERRIDE_SCRIPT.sha1).toBe('348473fa73725cf1c2913fcf9b79e037e6f3256c');
  });
});

describe('the lease script Redis runs', () => {
  it('has the SHA pinned here', () => {
    expect(LEASE_SCRIPT.sha1).toBe('2c400ed0b6bde7a69d8ae40e37344f4b3aefbd85');
  });
});
