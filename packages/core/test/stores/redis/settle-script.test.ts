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
  BAN_CHECK_SCRIPTS,
  BATCH_CHECK_SCRIPTS,
  HOT_KEY_CHECK_SCRIPTS,
  LEASE_SCRIPT,
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
    expect(SETTLE_SCRIPT.sha1).toBe('b4e95b7865e1c1639e356c9a5349db83a87776e8');
  });
});

describe('the single-check scripts Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    expect(
      Object.fromEntries(Object.entries(SINGLE_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1])),
    ).toEqual({
      'token-bucket': 'fef7384292f5a01daf77dd292e4554e204816634',
      'fixed-window': 'b64ee783123d875af41109af560094cff5824cf8',
      'sliding-window': '29437ce6ba9ecdcb99f1c6f9ff9745f4267266e8',
    });
  });
});

describe('the single-check scripts that read overrides', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(OVERRIDABLE_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': 'a7da79024598e78e4e9209006e32b5b91bf34126',
      'fixed-window': '5831fba325d005071bb30b559ab902c06f8d9419',
      'sliding-window': '7fe856cc94bf1029bc85bbb5fa6d1a84236ab8c3',
    });
  });
});

describe('the single-check scripts of a policy with a ban Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(BAN_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': 'fff73ac95891a7f6b653ba9c0248aff73b93ab45',
      'fixed-window': '97f1a0aac4c5f1f2468103ed44d6fc46fdd10d43',
      'sliding-window': '19552e9e4c902d14f0fd3deaf5690af1d13b24f9',
    });
  });
});

describe('the batch scripts Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(BATCH_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': '55cb56f00c85ff10e9a6202af5cb00de785d2bb1',
      'fixed-window': 'a3f583b940650ce3518446ab000cf01901030181',
      'sliding-window': '9814899ed3d5a026c07058faf85405a0904558fb',
    });
  });
});

describe('the batch scripts for one key Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    const shas = Object.entries(HOT_KEY_CHECK_SCRIPTS).map(([name, { sha1 }]) => [name, sha1]);
    expect(Object.fromEntries(shas)).toEqual({
      'token-bucket': '86809d7d17cb52dca960429824cb9272aa1a8bc8',
      'fixed-window': '6da451e3221dd9fde63263edd9b6e0f03bd20a1e',
      'sliding-window': 'dc087b8d587f3394144891eb257c50c75918d016',
    });
  });
});

describe('the single-check scripts of two policies Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    expect(pairShas(POLICY_PAIR_CHECK_SCRIPTS)).toEqual({
      'token-bucket token-bucket': '1b75fc7a135d142f4ba95bce90a8df6b43518e07',
      'token-bucket fixed-window': '539611c8b188b248e70855d3aafd58d3c5822cff',
      'token-bucket sliding-window': '0c8a5aced29088a99aa003bfdd30df96af29cd89',
      'fixed-window token-bucket': '066be9bb8899e6e9902f1fe9356e69530c42bac8',
      'fixed-window fixed-window': '265a6dc6361f69c0aef13fe0079ebeecabb0c14f',
      'fixed-window sliding-window': 'cbbe58e05b7bd2285747f5116add807cec489af8',
      'sliding-window token-bucket': '01ad05958d63d0ab280d3aa3d2b9652f395e97f6',
      'sliding-window fixed-window': '398174e1979b4670063570a7a49796a90b26a3fe',
      'sliding-window sliding-window': 'acc0001de9d71791e125bd047854d4f35c945f20',
    });
  });
});

describe('the batch scripts of two policies Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    expect(pairShas(POLICY_PAIR_BATCH_CHECK_SCRIPTS)).toEqual({
      'token-bucket token-bucket': '218bc4e4bab9f95f644e0f549eca786b4c779b31',
      'token-bucket fixed-window': '507217ec63a90e99db1fc3080f829cba92cfba7b',
      'token-bucket sliding-window': '3e9d95e5ccc85af8b0dabcc1fa74f84f71f896e5',
      'fixed-window token-bucket': '9b30dce79b293407e33404d933cbcf6193cf1621',
      'fixed-window fixed-window': 'a56ad0c72d7d08b49861e7b87b873bdf3c71d545',
      'fixed-window sliding-window': '00d6d644d830078a8931041dcbb9b9781a49ec1a',
      'sliding-window token-bucket': '8ea8ea36bf1f85e2669798e150838b59b8a2d4b0',
      'sliding-window fixed-window': 'fc4e7175bad4b97e0432ed3726ac52b9c925fac4',
      'sliding-window sliding-window': '296a276af6ef313cc0497f88ad103bec2f3550ad',
    });
  });
});

describe('the batch scripts of two policies for one key Redis runs', () => {
  it.skipIf(writing)('have their SHAs pinned here', () => {
    expect(pairShas(POLICY_PAIR_HOT_KEY_CHECK_SCRIPTS)).toEqual({
      'token-bucket token-bucket': '58a5230f539aaff3065a926f622c2b57476c37a9',
      'token-bucket fixed-window': '94317c88bf361061e621daf17a9fa89226f965c7',
      'token-bucket sliding-window': '7ee4004e7fe6702a928a6e97f875be56023a7747',
      'fixed-window token-bucket': '604603e712fb8921f9158b7803cd9180027bb0c2',
      'fixed-window fixed-window': '69e5ecac60d3815b4450933b4dd4efeb6e97c394',
      'fixed-window sliding-window': '3c84ee89a0597c78e4c240a5a914fb6384262904',
      'sliding-window token-bucket': '3666fa509bed28a9ab410e83744e25e85f691d1f',
      'sliding-window fixed-window': '2c181b54caf38830460b70fba08406800fc1965c',
      'sliding-window sliding-window': '3195f3363fcdd038aa8c0445e21fd67fea43b625',
    });
  });
});

describe('the single-check script of several policies Redis runs', () => {
  it.skipIf(writing)('has its SHA pinned here', () => {
    expect(POLICIES_CHECK_SCRIPT.sha1).toBe('e67741b49e73628f7c4a74e5422748892d568561');
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
    expect(RESERVATION_SCRIPT.sha1).toBe('1adc9baef009e5fbba77c6e0123581a6ab7f9641');
  });
});
