/** Secrets as identities: an API key or a token reaches a bucket key only as its hash. */
import { createHash, createHmac } from 'node:crypto';
import { TollgateOptionError } from './option-error.js';

/** The shortest `hmacKey` accepted, in bytes: shorter ones are passwords, not keys. */
const MIN_HMAC_KEY_BYTES = 16;

/** Options of {@link hashIdentity}. */
export interface HashIdentityOptions {
  /**
   * A secret of the app's: with it the digest is HMAC-SHA-256, which nobody without the key can compute.
   * Use it when secrets may be guessable (short or user-chosen API keys): plain SHA-256 of a guessable
   * secret can be found by trying candidates against a leaked Redis. At least 16 bytes; 32 random bytes
   * recommended, kept out of the code (e.g. `process.env.TOLLGATE_HMAC_KEY`). Every server must use the
   * same key, and changing it gives every client a fresh bucket. Default: none (plain SHA-256).
   */
  hmacKey?: string | Uint8Array;
}

/**
 * A one-way digest of a secret (an API key, a token), for use as an identity: the secret itself never
 * reaches Redis or a log. SHA-256, or HMAC-SHA-256 with `hmacKey`; base64url, prefixed (`sha256:`,
 * `hmac-sha256:`) so it cannot be mistaken for a plain identity.
 *
 * Plain SHA-256 is the default because it needs no key to manage and to share between servers, and it
 * cannot be reversed for secrets with enough entropy, such as keys of 128 random bits or more that an
 * app generates. For anything guessable, pass `hmacKey`.
 *
 * @example
 * limiter.consume(hashIdentity(apiKey));
 * limiter.consume(hashIdentity(apiKey, { hmacKey: process.env.TOLLGATE_HMAC_KEY }));
 */
export function hashIdentity(secret: string, options: HashIdentityOptions = {}): string {
  const { hmacKey } = options;
  if (hmacKey === undefined) return `sha256:${createHash('sha256').update(secret).digest('base64url')}`;
  checkHmacKey(hmacKey, 'hashIdentity hmacKey');
  return `hmac-sha256:${createHmac('sha256', hmacKey).update(secret).digest('base64url')}`;
}

/** Throws a `TypeError` naming `what` unless `hmacKey` is a string or bytes of at least 16 bytes. */
export function checkHmacKey(hmacKey: unknown, what: string): void {
  const bytes =
    typeof hmacKey === 'string'
      ? Buffer.byteLength(hmacKey)
      : hmacKey instanceof Uint8Array
        ? hmacKey.byteLength
        : -1;
  if (bytes < MIN_HMAC_KEY_BYTES) {
    throw new TollgateOptionError(
      `${what} must be a string or bytes of at least ${MIN_HMAC_KEY_BYTES} bytes (32 random bytes recommended); ` +
        (bytes < 0 ? `got ${typeof hmacKey}` : `got ${bytes} bytes`),
    );
  }
}
