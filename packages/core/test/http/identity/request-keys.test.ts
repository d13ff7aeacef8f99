import { describe, expect, it } from 'vitest';
import {
  type ByApiKeyOptions,
  byApiKey,
  byIp,
  byUser,
  firstOf,
  type KeyFunction,
} from '../../../src/http/identity/request-keys.js';
import { hashIdentity } from '../../../src/support/identity.js';
import { type FakeRequest, fakeAccess } from '../fixtures.js';

const keyOf = (key: KeyFunction<FakeRequest>, request: FakeRequest) => key(request, fakeAccess);

describe('byIp', () => {
  it('keys by the IP the framework resolved, grouping IPv6 by /56 by default', async () => {
    const key = byIp<FakeRequest>();
    expect(await keyOf(key, { ip: '203.0.113.7' })).toBe('ip:203.0.113.7');
    expect(await keyOf(key, { ip: '::ffff:203.0.113.7' })).toBe('ip:203.0.113.7');
    expect(await keyOf(key, { ip: '2001:db8:ab:cd12::1' })).toBe('ip:2001:db8:ab:cd00::/56');
  });

  it('takes the ipv6Subnet option', async () => {
    expect(await keyOf(byIp({ ipv6Subnet: 64 }), { ip: '2001:db8:ab:cd12::1' })).toBe(
      'ip:2001:db8:ab:cd12::/64',
    );
    expect(await keyOf(byIp({ ipv6Subnet: false }), { ip: '2001:db8:ab:cd12::1' })).toBe(
      'ip:2001:db8:ab:cd12::1',
    );
  });

  it('never reads X-Forwarded-For', async () => {
    const request = { ip: '10.0.0.1', headers: { 'x-forwarded-for': '198.51.100.9' } };
    expect(await keyOf(byIp(), request)).toBe('ip:10.0.0.1');
  });

  it('returns undefined when there is no IP or it is not one', async () => {
    expect(await keyOf(byIp(), {})).toBeUndefined();
    expect(await keyOf(byIp(), { ip: 'garbage' })).toMatch(/^ip-unparsed:sha256:/); // its own bucket, never a shared one
  });

  it.each([0, 129, -8, 56.5, Number.NaN, '64', true, null])('rejects ipv6Subnet %j', (ipv6Subnet) => {
    expect(() => byIp({ ipv6Subnet: ipv6Subnet as never })).toThrow(
      new TypeError(
        `byIp ipv6Subnet must be a whole number from 1 to 128, or false; got ${String(ipv6Subnet)}`,
      ),
    );
  });

  it.each([1, 48, 128, false] as const)('accepts ipv6Subnet %j', (ipv6Subnet) => {
    expect(() => byIp({ ipv6Subnet })).not.toThrow();
  });
});

describe('byApiKey', () => {
  const secret = 'sk_live_8f4b2c1d9e';
  const issued = new Set([secret, `${secret}x`]);
  const verify = (key: string) => issued.has(key);
  const byIssuedKey = (options: Omit<ByApiKeyOptions<FakeRequest>, 'verify'> = {}) =>
    byApiKey<FakeRequest>({ verify, ...options });

  it('keys by a hash of the x-api-key header that never contains the secret', async () => {
    const identity = await keyOf(byIssuedKey(), { headers: { 'x-api-key': secret } });
    expect(identity).toMatch(/^key:sha256:[A-Za-z0-9_-]{43}$/);
    expect(identity).not.toContain(secret);
    expect(identity).not.toContain(secret.slice(3));
  });

  it('gives equal secrets equal keys and different secrets different keys', async () => {
    const key = byIssuedKey();
    const first = await keyOf(key, { headers: { 'x-api-key': secret } });
    expect(await keyOf(key, { headers: { 'x-api-key': secret } })).toBe(first);
    expect(await keyOf(key, { headers: { 'x-api-key': `${secret}x` } })).not.toBe(first);
  });

  it('ignores whitespace around the key', async () => {
    const key = byIssuedKey();
    expect(await keyOf(key, { headers: { 'x-api-key': `  ${secret}\t` } })).toBe(
      await keyOf(key, { headers: { 'x-api-key': secret } }),
    );
  });

  it('reads the header it is given, by its lower-case name', async () => {
    const key = byIssuedKey({ header: 'X-Tenant-Key' });
    expect(await keyOf(key, { headers: { 'x-tenant-key': secret } })).toBe(
      await keyOf(byIssuedKey(), { headers: { 'x-api-key': secret } }),
    );
    expect(await keyOf(key, { headers: { 'x-api-key': secret } })).toBeUndefined();
  });

  it('reads only the Bearer token of the authorization header', async () => {
    const key = byIssuedKey({ header: 'Authorization' });
    const token = await keyOf(key, { headers: { authorization: `Bearer ${secret}` } });
    expect(token).toBe(await keyOf(byIssuedKey(), { headers: { 'x-api-key': secret } }));
    expect(await keyOf(key, { headers: { authorization: `bearer   ${secret} ` } })).toBe(token);
    expect(token).not.toContain(secret);
  });

  it.each(['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Bearer a b', 'Token abc', 'abc'])(
    'ignores the authorization header %j',
    async (value) => {
      const key = byApiKey<FakeRequest>({ header: 'authorization', verify: () => true });
      expect(await keyOf(key, { headers: { authorization: value } })).toBe(undefined);
    },
  );

  it.each([{}, { headers: {} }, { headers: { 'x-api-key': '' } }, { headers: { 'x-api-key': '   ' } }])(
    'returns undefined for a request without a key, without asking verify: %j',
    async (request) => {
      const asked: string[] = [];
      const key = byApiKey<FakeRequest>({ verify: (k) => asked.push(k) > 0 });
      expect(await keyOf(key, request)).toBeUndefined();
      expect(asked).toEqual([]);
    },
  );

  it('returns undefined for a key verify refuses, so firstOf falls through to the IP', async () => {
    const key = firstOf<FakeRequest>(byIssuedKey(), byIp());
    const made_up = { ip: '203.0.113.7', headers: { 'x-api-key': 'sk_live_guess' } };
    expect(await keyOf(key, made_up)).toBe('ip:203.0.113.7');
    expect(await keyOf(key, { ...made_up, headers: { 'x-api-key': secret } })).toMatch(/^key:sha256:/);
  });

  it('awaits an async verify and hands it the key and the request', async () => {
    const seen: [string, FakeRequest][] = [];
    const key = byApiKey<FakeRequest>({
      verify: async (k, request) => {
        seen.push([k, request]);
        return request.user === 'owner';
      },
    });
    const request = { user: 'owner', headers: { 'x-api-key': secret } };
    expect(await keyOf(key, request)).toMatch(/^key:sha256:/);
    expect(await keyOf(key, { headers: { 'x-api-key': secret } })).toBeUndefined();
    expect(seen[0]).toEqual([secret, request]);
  });

  it.each([false, undefined, null])('treats a verify result of %j as refused', async (verdict) => {
    const key = byApiKey<FakeRequest>({ verify: () => verdict });
    expect(await keyOf(key, { headers: { 'x-api-key': secret } })).toBeUndefined();
  });

  it.each([1, 'yes', { id: 7 }])(
    'throws when verify returns %j instead of true or false',
    async (verdict) => {
      const key = byApiKey<FakeRequest>({ verify: () => verdict as never });
      await expect(keyOf(key, { headers: { 'x-api-key': secret } })).rejects.toThrow(
        /byApiKey verify must return true or false/,
      );
    },
  );

  it('hashes with HMAC-SHA-256 under hmacKey, so the store cannot be searched for guessable keys', async () => {
    const hmacKey = 'a-secret-of-the-app-0123456789abcdef';
    const identity = await keyOf(byIssuedKey({ hmacKey }), { headers: { 'x-api-key': secret } });
    expect(identity).toBe(`key:${hashIdentity(secret, { hmacKey })}`);
    expect(identity).toMatch(/^key:hmac-sha256:[A-Za-z0-9_-]{43}$/);
    expect(identity).not.toBe(await keyOf(byIssuedKey(), { headers: { 'x-api-key': secret } }));
    expect(identity).not.toBe(
      await keyOf(byIssuedKey({ hmacKey: `${hmacKey}2` }), { headers: { 'x-api-key': secret } }),
    );
  });

  it.each([undefined, {}, { header: 'x-api-key' }, { verify: true }])(
    'refuses to be built without a verify function: %j',
    (options) => {
      expect(() => byApiKey(options as never)).toThrow(
        /byApiKey needs \{ verify \}: .* every made-up key would get a bucket of its own/,
      );
    },
  );

  it.each(['', 'short', Buffer.alloc(15), 42])('rejects the hmacKey %j', (hmacKey) => {
    expect(() => byIssuedKey({ hmacKey: hmacKey as never })).toThrow(
      /byApiKey hmacKey must be a string or bytes of at least 16 bytes/,
    );
  });

  it.each(['', 'x api key', 'x-api-key:', 'ключ', 42])('rejects the header name %j', (header) => {
    expect(() => byIssuedKey({ header: header as never })).toThrow(/byApiKey header must be a header name/);
  });
});

describe('byUser', () => {
  it.each([
    ['u-42', 'user:u-42'],
    [42, 'user:42'],
    [0, 'user:0'],
  ] as const)('keys user id %j as %s', async (id, identity) => {
    expect(
      await keyOf(
        byUser((request) => request.user),
        { user: id },
      ),
    ).toBe(identity);
  });

  it.each([undefined, null, ''])('treats user id %j as anonymous', async (id) => {
    expect(
      await keyOf(
        byUser((request) => request.user),
        { user: id },
      ),
    ).toBeUndefined();
  });

  it('awaits an async user function', async () => {
    const key = byUser<FakeRequest>(async (request) => request.user);
    expect(await keyOf(key, { user: 'u-7' })).toBe('user:u-7');
    expect(await keyOf(key, {})).toBeUndefined();
  });

  it.each([undefined, 'user', { id: 1 }])('rejects %j instead of a function', (userOf) => {
    expect(() => byUser(userOf as never)).toThrow(
      new TypeError('byUser needs a function returning the user id'),
    );
  });
});

describe('firstOf', () => {
  const key = firstOf<FakeRequest>(
    byUser((request) => request.user),
    byApiKey({ verify: (k) => k === 'k' }),
    byIp(),
  );

  it('takes the first key function that applies, in order', async () => {
    const everything = { user: 'u-1', headers: { 'x-api-key': 'k' }, ip: '10.0.0.1' };
    expect(await keyOf(key, everything)).toBe('user:u-1');
  });

  it('falls through to the next when one returns undefined', async () => {
    const apiKey = await keyOf(byApiKey({ verify: () => true }), { headers: { 'x-api-key': 'k' } });
    expect(await keyOf(key, { headers: { 'x-api-key': 'k' }, ip: '10.0.0.1' })).toBe(apiKey);
    expect(await keyOf(key, { ip: '10.0.0.1' })).toBe('ip:10.0.0.1');
  });

  it('returns undefined when none applies', async () => {
    expect(await keyOf(key, {})).toBeUndefined();
  });

  it('does not call the later functions once one applied', async () => {
    const calls: string[] = [];
    const tracked = (name: string, identity: string | undefined): KeyFunction<FakeRequest> => {
      return async () => {
        calls.push(name);
        return identity;
      };
    };
    const chain = firstOf(tracked('a', undefined), tracked('b', 'b-id'), tracked('c', 'c-id'));
    expect(await keyOf(chain, {})).toBe('b-id');
    expect(calls).toEqual(['a', 'b']);
  });

  it('hands each function the access object', async () => {
    const chain = firstOf<FakeRequest>((request, access) => access.header(request, 'x-tenant'));
    expect(await keyOf(chain, { headers: { 'x-tenant': 'acme' } })).toBe('acme');
  });

  it.each([[[]], [[byIp(), 'byIp']], [[undefined]], [[null, byIp()]]])('rejects the arguments %j', (keys) => {
    expect(() => firstOf(...(keys as never[]))).toThrow(
      new TypeError('firstOf needs one or more key functions'),
    );
  });
});
