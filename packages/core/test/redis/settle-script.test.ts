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
    expect(SETTLE_SCRIPT.sha1).toBe('65c59266b677edb57d0e11acd11fcdb76fcb3ed1');
  });
});

describe('the single-check scripts Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    expect(
      Object.fromEntries(Object.entries(SINGLE_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1])),
    ).toEqual({
      'token-bucket': '9d8e77a6b7885650817618c0ced2bcbe09518bec',
      'fixed-window': 'ade813622171ba31d4a65879498cf311eb7c4b27',
      'sliding-window': '01f69bd8631e61ff9a7f7188def956bcbb39ae3f',
    });
  });
});

describe('the single-check scripts that read overrides', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(OVERRIDABLE_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': 'bdce69625d1c6cbd1c73e54d69f0670dd9ee8cb1',
      'fixed-window': '07dc68a7996dc87d3fec1e2b33ad1e627df5646a',
      'sliding-window': '16f80e91dd86b4149db3e68aeb9aafb5e7684afa',
    });
  });
});

describe('the single-check script of several policies Redis runs', () => {
  it.skipIf(writing)('has its SHA pinned here', () => {
    expect(POLICIES_CHECK_SCRIPT.sha1).toBe('7d120ee339e3e149e6b7e13a5c9e0ee07f512abb');
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
