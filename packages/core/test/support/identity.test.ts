import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_IDENTITY_LENGTH } from '../../src/limiter/bucket-key.js';
import { hashIdentity } from '../../src/support/identity.js';

const secret = 'sk_live_8f4b2c1d9e';
const hmacKey = 'a-secret-of-the-app-0123456789abcdef';

describe('hashIdentity', () => {
  it('is plain SHA-256 by default, as before, so existing buckets keep their keys', () => {
    expect(hashIdentity(secret)).toBe(`sha256:${createHash('sha256').update(secret).digest('base64url')}`);
  });

  it('is HMAC-SHA-256 under hmacKey, a string or bytes', () => {
    const expected = `hmac-sha256:${createHmac('sha256', hmacKey).update(secret).digest('base64url')}`;
    expect(hashIdentity(secret, { hmacKey })).toBe(expected);
    expect(hashIdentity(secret, { hmacKey: Buffer.from(hmacKey) })).toBe(expected);
    expect(hashIdentity(secret, { hmacKey: new Uint8Array(Buffer.from(hmacKey)) })).toBe(expected);
  });

  it('never contains the secret', () => {
    for (const identity of [hashIdentity(secret), hashIdentity(secret, { hmacKey })]) {
      expect(identity).not.toContain(secret);
      expect(identity.length).toBeLessThan(MAX_IDENTITY_LENGTH);
    }
  });

  it.each(['', 'fifteen-bytes!!', Buffer.alloc(8), 7, null])('rejects the hmacKey %j', (key) => {
    expect(() => hashIdentity(secret, { hmacKey: key as never })).toThrow(
      /hashIdentity hmacKey must be a string or bytes of at least 16 bytes/,
    );
  });

  it('does not put the hmacKey in its error message', () => {
    expect(() => hashIdentity(secret, { hmacKey: 'too-short' })).toThrow(/got 9 bytes$/);
  });
});
