/**
 * The bucket owner a limiter hands its store: a namespace and an identity joined so that no two
 * different pairs give one key, bounded in length, and without the braces that choose a Redis Cluster
 * slot — so a client can neither share another's bucket nor pick where its keys land.
 */
import { createHash } from 'node:crypto';

/** Identities longer than this are stored as their hash, so a client cannot make keys of any size. */
export const MAX_IDENTITY_LENGTH = 128;

/** Characters escaped in an identity: the escape itself, the hashed-identity mark, and Redis's hash-tag braces. */
const ESCAPED = /[%#{}]/;
const ESCAPED_ALL = /[%#{}]/g;
const ESCAPES: Record<string, string> = { '%': '%25', '#': '%23', '{': '%7B', '}': '%7D' };

/**
 * The store key of `identity` under `namespace` (`''` for none): `<namespace>/<identity>`.
 *
 * - The namespace holds no `/` (limiters validate it), so the first `/` ends it: `api` + `user:42` and
 *   `api:user` + `42` stay apart.
 * - `%`, `#`, `{` and `}` in the identity are percent-encoded, so the key never holds a brace and a
 *   plain identity never starts with `#`.
 * - An identity longer than {@link MAX_IDENTITY_LENGTH} becomes `#` and its SHA-256 (base64url), which
 *   no plain identity can spell.
 *
 * Throws a `TypeError` on an empty or non-string identity (an empty one would make every client share
 * one bucket).
 *
 * @example
 * bucketOwner('login', 'ip:10.0.0.1'); // 'login/ip:10.0.0.1'
 * bucketOwner('', '}x');               // '/%7Dx'
 */
export function bucketOwner(namespace: string, identity: string): string {
  if (typeof identity !== 'string' || identity.length === 0) {
    throw new TypeError(`a rate-limit key must be a non-empty string; got ${JSON.stringify(identity)}`);
  }
  if (identity.length > MAX_IDENTITY_LENGTH) {
    return `${namespace}/#${createHash('sha256').update(identity).digest('base64url')}`;
  }
  if (!ESCAPED.test(identity)) return `${namespace}/${identity}`;
  return `${namespace}/${identity.replace(ESCAPED_ALL, (char) => ESCAPES[char] as string)}`;
}
