/** Identities as they go into bucket keys: bounded in length, and secrets only ever as a hash. */
import { createHash } from 'node:crypto';

/** Identities longer than this are stored as their hash, so a client cannot make keys of any size. */
export const MAX_IDENTITY_LENGTH = 128;

/**
 * A one-way digest of a secret (an API key, a token), for use as an identity: the secret itself never
 * reaches Redis or a log. SHA-256, base64url, prefixed so it cannot be mistaken for a plain identity.
 *
 * @example
 * limiter.consume(hashIdentity(apiKey));
 */
export function hashIdentity(secret: string): string {
  return `sha256:${createHash('sha256').update(secret).digest('base64url')}`;
}

/**
 * The identity as a bucket key: unchanged when short, hashed when longer than
 * {@link MAX_IDENTITY_LENGTH}. Throws on an empty or non-string identity (an empty one would make every
 * client share one bucket).
 */
export function boundIdentity(identity: string): string {
  if (typeof identity !== 'string' || identity.length === 0) {
    throw new TypeError(`a rate-limit key must be a non-empty string; got ${JSON.stringify(identity)}`);
  }
  return identity.length > MAX_IDENTITY_LENGTH ? hashIdentity(identity) : identity;
}
