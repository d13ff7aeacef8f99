import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  GENERATED_PATH,
  LUA_DIR,
  luaFiles,
  REGENERATE,
  settleScriptModule,
} from '../../../src/stores/redis/script/lua-files.js';
import { RESERVATION_SCRIPT } from '../../../src/stores/redis/script/reservation-wire.js';
import {
  BAN_BATCH_CHECK_SCRIPTS,
  BAN_CHECK_SCRIPTS,
  BAN_HOT_CHECK_SCRIPTS,
  BATCH_CHECK_SCRIPTS,
  HOT_KEY_CHECK_SCRIPTS,
  LEASE_SCRIPT,
  OVERRIDABLE_BATCH_CHECK_SCRIPTS,
  OVERRIDABLE_CHECK_SCRIPTS,
  OVERRIDE_SCRIPT,
  POLICIES_CHECK_SCRIPT,
  POLICY_PAIR_BATCH_CHECK_SCRIPTS,
  POLICY_PAIR_CHECK_SCRIPTS,
  POLICY_PAIR_HOT_KEY_CHECK_SCRIPTS,
  SETTLE_SCRIPT,
  SINGLE_CHECK_SCRIPTS,
} from '../../../src/stores/redis/script/wire.js';

const writing = process.env.TOLLGATE_WRITE_LUA === '1';
const generatedPath = fileURLToPath(new URL(`../../../${GENERATED_PATH}`, import.meta.url));
const luaDir = fileURLToPath(new URL(`../../../${LUA_DIR}`, import.meta.url));

/** A pair's scripts by the file each is committed as: `check-<first>-and-<second><suffix>.lua`. */
function byPairFile(
  scripts: Record<string, Record<string, { source: string; sha1: string }>>,
  suffix: string,
): Record<string, { source: string; sha1: string }> {
  return Object.fromEntries(
    Object.entries(scripts).flatMap(([first, seconds]) =>
      Object.entries(seconds).map(([second, script]) => [
        `check-${first}-and-${second}${suffix}.lua`,
        script,
      ]),
    ),
  );
}

/** A pair's scripts' SHAs, by `<first> <second>`. */
function pairShas(scripts: Record<string, Record<string, { sha1: string }>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(scripts).flatMap(([first, seconds]) =>
      Object.entries(seconds).map(([second, { sha1 }]) => [`${first} ${second}`, sha1]),
    ),
  );
}

describe('the .lua files of the scripts Redis runs', () => {
  it('are committed exactly as the generators make them, and no others', () => {
    const files = luaFiles();
    if (writing) {
      rmSync(luaDir, { recursive: true, force: true });
      mkdirSync(luaDir, { recursive: true });
      for (const [name, lua] of Object.entries(files)) writeFileSync(`${luaDir}/${name}`, lua);
      return;
    }
    expect(readdirSync(luaDir).sort(), `out of step: run \`${REGENERATE}\``).toEqual(
      Object.keys(files).sort(),
    );
    for (const [name, lua] of Object.entries(files)) {
      expect(readFileSync(`${luaDir}/${name}`, 'utf8'), `${name} out of step: run \`${REGENERATE}\``).toBe(
        lua,
      );
    }
  });

  it.skipIf(writing)('are what the store sends', () => {
    const files = luaFiles();
    const sent = {
      'settle.lua': SETTLE_SCRIPT,
      'check-policies.lua': POLICIES_CHECK_SCRIPT,
      'override.lua': OVERRIDE_SCRIPT,
      'lease.lua': LEASE_SCRIPT,
      'reservation.lua': RESERVATION_SCRIPT,
      ...Object.fromEntries(
        Object.entries(SINGLE_CHECK_SCRIPTS).map(([name, script]) => [`check-${name}.lua`, script]),
      ),
      ...Object.fromEntries(
        Object.entries(OVERRIDABLE_CHECK_SCRIPTS).map(([name, script]) => [
          `check-${name}-overridable.lua`,
          script,
        ]),
      ),
      ...Object.fromEntries(
        Object.entries(BAN_CHECK_SCRIPTS).map(([name, script]) => [`check-${name}-ban.lua`, script]),
      ),
      ...Object.fromEntries(
        Object.entries(OVERRIDABLE_BATCH_CHECK_SCRIPTS).map(([name, script]) => [
          `check-${name}-overridable-batch.lua`,
          script,
        ]),
      ),
      ...Object.fromEntries(
        Object.entries(BAN_BATCH_CHECK_SCRIPTS).map(([name, script]) => [
          `check-${name}-ban-batch.lua`,
          script,
        ]),
      ),
      ...Object.fromEntries(
        Object.entries(BAN_HOT_CHECK_SCRIPTS).map(([name, script]) => [`check-${name}-ban-hot.lua`, script]),
      ),
      ...Object.fromEntries(
        Object.entries(BATCH_CHECK_SCRIPTS).map(([name, script]) => [`check-${name}-batch.lua`, script]),
      ),
      ...Object.fromEntries(
        Object.entries(HOT_KEY_CHECK_SCRIPTS).map(([name, script]) => [`check-${name}-hot.lua`, script]),
      ),
      ...byPairFile(POLICY_PAIR_CHECK_SCRIPTS, ''),
      ...byPairFile(POLICY_PAIR_BATCH_CHECK_SCRIPTS, '-batch'),
      ...byPairFile(POLICY_PAIR_HOT_KEY_CHECK_SCRIPTS, '-hot'),
    };
    expect(Object.keys(sent).sort()).toEqual(Object.keys(files).sort());
    for (const [name, script] of Object.entries(sent)) {
      expect(script.source, name).toBe(files[name]);
      expect(script.sha1, name).toBe(createHash('sha1').update(script.source).digest('hex'));
    }
  });
});

describe('the settle script Redis runs', () => {
  // `pnpm --filter @tollgate/core lua:write` runs this file with TOLLGATE_WRITE_LUA=1 to rewrite it.
  it('is committed exactly as generate.ts makes it from the algorithms’ Lua', () => {
    const generated = settleScriptModule();
    if (writing) writeFileSync(generatedPath, generated);
    else expect(readFileSync(generatedPath, 'utf8'), `out of step: run \`${REGENERATE}\``).toBe(generated);
  });

  // A change here is a change in what every Redis runs: servers of two versions sharing one Redis run
  // both scripts side by side, so say in the changeset whether the stored values and answers still agree.
  it.skipIf(writing)('has the SHA pinned here', () => {
    expect(SETTLE_SCRIPT.sha1).toBe('58899e143fce23fa6f3c7d8ec6f8a6ea25bd97b5');
  });
});

describe('the single-check scripts Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    expect(
      Object.fromEntries(Object.entries(SINGLE_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1])),
    ).toEqual({
      'token-bucket': '3cee81fdc9fb9704a56e336d90c62287895f6034',
      'fixed-window': '2b68ed3205802ee2e6eea05b74f4a12bd7fecdd1',
      'sliding-window': '95c7d3f82c25d4efa3c911027651cf98fe35d536',
    });
  });
});

describe('the single-check scripts that read overrides', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(OVERRIDABLE_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': '24ccb6040a94740cc03afb01f1424789e900d2e6',
      'fixed-window': 'ad9c0a66b8ac12de9117186cd4cc3b7b90e47864',
      'sliding-window': '4a0033d79e1180031fa9eb9cab766a9d8146b5ea',
    });
  });
});

describe('the single-check scripts of a policy with a ban Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(BAN_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': '8578193008b44cdc6888dc8ee1382fb3fe5966da',
      'fixed-window': '561e06b005f60803df26d795ed0ffe40ed1e61f5',
      'sliding-window': '52874f0116ca13916c0dd48884eed4fa09b96a14',
    });
  });
});

describe('the batch scripts that read overrides Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(OVERRIDABLE_BATCH_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': 'd52e39272c63c52b95655b5c96f40f4402e38a92',
      'fixed-window': 'bf5bf7448945920e067d6a3d6116a9f3e88becbb',
      'sliding-window': '4e69bebb2446a27c07aa17a366646e0478996e02',
    });
  });
});

describe('the batch scripts of a policy with a ban Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(BAN_BATCH_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': 'cbd30d3f05592d9075526f235bfd3de9316f55c5',
      'fixed-window': '9595ba988e8911e9f3ece00b00a489b263ac8923',
      'sliding-window': '47800ad72d1c444a9e31052316f193b854382a73',
    });
  });
});

describe('the batch scripts of a policy with a ban on one key Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(BAN_HOT_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': 'b513a81f68c527c5dc550397f8668ad447178db8',
      'fixed-window': 'bf7d575cfb69e2663debdbbab8986fb2639c147c',
      'sliding-window': 'e8686561ce28e9a9ea4707d659115d25bb4034a6',
    });
  });
});

describe('the batch scripts Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(BATCH_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': '3784f106bef931bddbadc2817927207abe786c67',
      'fixed-window': '76b707a73d03dbe5ba75d1624660060797a1da87',
      'sliding-window': '30c7acc1caca0c4f60804aa8ac442e80b0934742',
    });
  });
});

describe('the batch scripts for one key Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(HOT_KEY_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': '4b8d02bbced5a9311e5f4e88911f1e64c7e2fda2',
      'fixed-window': 'bbc6dc6e10679e74f0309c9a242b840faa24d317',
      'sliding-window': '09a171262df89046d9c0edbde16dcb7a1c7f1a43',
    });
  });
});

describe('the single-check scripts of two policies Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    expect(pairShas(POLICY_PAIR_CHECK_SCRIPTS)).toEqual({
      'token-bucket token-bucket': '165f180ee4e6540ec13a44055dd278f9f62c96e1',
      'token-bucket fixed-window': 'e714850309021053fe62dd156b80af8817ae41ac',
      'token-bucket sliding-window': 'cfecc8242d99698df29b11b3e82d07168ea7cee7',
      'fixed-window token-bucket': '75949caf8267bcad2403accbc0c227c5db531aa8',
      'fixed-window fixed-window': 'b9a793b3a0e968210f761b9e14456e3ac6717e23',
      'fixed-window sliding-window': '2281b2850fde00534058f91dfcd4a9fee6e35e06',
      'sliding-window token-bucket': 'c5ffe53d30f64311bad99b0d79d699b664a43826',
      'sliding-window fixed-window': '5aec2f9f5ea79d50cc2a92e52985396b0be30747',
      'sliding-window sliding-window': 'f88b3f518e5ce51c3776321e240382750b62b255',
    });
  });
});

describe('the batch scripts of two policies Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    expect(pairShas(POLICY_PAIR_BATCH_CHECK_SCRIPTS)).toEqual({
      'token-bucket token-bucket': 'a65cef42a2f0652ff66ac07b95f0abe664da2ba4',
      'token-bucket fixed-window': '0b30593a650374dfa1f710084511737841ea9a33',
      'token-bucket sliding-window': '0464a92154573e2207dcde74dda7ea57e4c83b83',
      'fixed-window token-bucket': 'f4ab183841d363b02f01eb571c31e5edb62e74e6',
      'fixed-window fixed-window': '4daa2375d0c6068ec59900508bb59cd0203a4b8a',
      'fixed-window sliding-window': 'ce0e484aa9eff654f261e058489d1ad5490a777c',
      'sliding-window token-bucket': '68126c7b95bcf640d118ad4c7f9fc36a566e996f',
      'sliding-window fixed-window': '0bf3151b15a01793c090d4b7b4f24d0a24cabad7',
      'sliding-window sliding-window': '231b51b456ee4ad05644aedac63a5044b56ebc10',
    });
  });
});

describe('the batch scripts of two policies for one key Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    expect(pairShas(POLICY_PAIR_HOT_KEY_CHECK_SCRIPTS)).toEqual({
      'token-bucket token-bucket': 'c865402221eaaf5d1d81c09e40e2024bf9cbb0f5',
      'token-bucket fixed-window': 'fc901b83a029f0e09d98c7921b277045566bd1ab',
      'token-bucket sliding-window': '14e479a41c51dc9afa47bbd92323220cc5d5e120',
      'fixed-window token-bucket': '8174bc66e67bfd304920de2360cbb7fd174de559',
      'fixed-window fixed-window': 'f3c1b397e6fbee297a47872966fec0c812e4f857',
      'fixed-window sliding-window': '92ad6154cd2cd2b63b7a08e61eed44a714e69152',
      'sliding-window token-bucket': 'e1daa103a6cf8a65845edf69cc1102ca9819e328',
      'sliding-window fixed-window': 'a6580ea1f63fb5fef77f5127fb1d296044e38aa3',
      'sliding-window sliding-window': '4f8169bd6ab3c2838902d1bb1fcccb83b563cd1c',
    });
  });
});

describe('the single-check script of several policies Redis runs', () => {
  it.skipIf(writing)('has its SHA pinned here', () => {
    expect(POLICIES_CHECK_SCRIPT.sha1).toBe('01a15a662efa19b87728122ba1aa094c3cd045b4');
  });
});

describe('the override script Redis runs', () => {
  it('has the SHA pinned here', () => {
    expect(OVERRIDE_SCRIPT.sha1).toBe('eca4ba5a948f741df0f36ddaf13c1745aa6ccf82');
  });
});

describe('the lease script Redis runs', () => {
  it('has the SHA pinned here', () => {
    expect(LEASE_SCRIPT.sha1).toBe('21fc8f5e1248570569144691c98e2b48e0caf98f');
  });
});

describe('the reservation script Redis runs', () => {
  // It holds the settle script: a change to that one changes this one too.
  it.skipIf(writing)('has the SHA pinned here', () => {
    expect(RESERVATION_SCRIPT.sha1).toBe('6b6336a1ce65a97e2fc8ed15822b0daafd26d033');
  });
});
