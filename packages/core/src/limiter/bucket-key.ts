/**
 * The bucket owner a limiter hands its store: a namespace and an identity joined so that no two
 * different pairs give one key, bounded in length, and without the braces that choose a Redis Cluster
 * slot — so a client can neither share another's bucket nor pick where its keys land.
 */
import { createHash } from 'node:crypto';
import { TollgateArgumentError } from '../support/argument-error.js';

/** Identities longer than this are stored as their hash, so a client cannot make keys of any size. */
export const MAX_IDENTITY_LENGTH = 128;

/**
 * Characters escaped in an identity: the escape itself, the hashed-identity mark, Redis's hash-tag
 * braces, and surrogates (lone ones are escaped; a pair, a character such as an emoji, is kept).
 */
const ESCAPED = /[%#{}\uD800-\uDFFF]/;
const ESCAPED_ALL = /[%#{}]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const ESCAPES: Record<string, string> = { '%': '%25', '#': '%23', '{': '%7B', '}': '%7D' };

/**
 * The store key of `identity` under `namespace` (`''` for none): `<namespace>/<identity>`.
 *
 * - The namespace holds no `/` (limiters validate it), so the first `/` ends it: `api` + `user:42` and
 *   `api:user` + `42` stay apart.
 * - `%`, `#`, `{` and `}` in the identity are percent-encoded, so the key never holds a brace and a
 *   plain identity never starts with `#`.
 * - A lone surrogate (`'user:\ud800'`, which a JSON body can carry) becomes `%uD800`. Encoded as UTF-8
 *   on its way to Redis it would become U+FFFD, the same bytes for every lone surrogate, and clients
 *   the memory store keeps apart would share one Redis bucket. Since `%` itself is escaped, `%u` can
 *   only come from a surrogate: no two identities share a key.
 * - An identity longer than {@link MAX_IDENTITY_LENGTH} becomes `#` and its SHA-256 (base64url), which
 *   no plain identity can spell; one with a lone surrogate, `#~` and the SHA-256 of its escaped form.
 *
 * Throws a `TypeError` on an empty or non-string identity (an empty one would make every client share
 * one bucket).
 *
 * @example
 * bucketOwner('login', 'ip:10.0.0.1'); // 'login/ip:10.0.0.1'
 * bucketOwner('', '}x');               // '/%7Dx'
 * bucketOwner('', 'user:\ud800');      // '/user:%uD800'
 */
export function bucketOwner(namespace: string, identity: string): string {
  if (typeof identity !== 'string' || identity.length === 0) {
    throw new TollgateArgumentError(
      `a rate-limit key must be a non-empty string; got ${JSON.stringify(identity)}`,
    );
  }
  if (identity.length > MAX_IDENTITY_LENGTH) return `${namespace}/${hashedIdentity(identity)}`;
  if (!ESCAPED.test(identity)) return `${namespace}/${identity}`;
  return `${namespace}/${escaped(identity)}`;
}

/** A long identity as a bounded one: its digest, over bytes that say exactly which string it was. */
function hashedIdentity(identity: string): string {
  // Hashing takes UTF-8, which folds every lone surrogate into U+FFFD: such an identity is hashed in
  // its escaped form, under a mark of its own, so it cannot collide with the one spelled with U+FFFD.
  if (!LONE_SURROGATE.test(identity)) return `#${createHash('sha256').update(identity).digest('base64url')}`;
  return `#~${createHash('sha256').update(escaped(identity)).digest('base64url')}`;
}

function escaped(identity: string): string {
  return identity.replace(ESCAPED_ALL, (char) => ESCAPES[char] ?? surrogateEscape(char));
}

function surrogateEscape(char: string): string {
  return `%u${char.charCodeAt(0).toString(16).toUpperCase()}`;
}
