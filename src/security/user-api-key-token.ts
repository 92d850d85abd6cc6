import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/**
 * Per-user API keys: `jmu_<key id, 32 hex>_<secret, 43 base64url>`.
 *
 * The prefix lets the auth hook tell a user key from a tenant key by its spelling, so tenant keys
 * never cost a database query (and API_KEYS may not hold a key spelled like this). The key id is
 * public (it is listed and revoked by); the secret is 256 random bits and only its SHA-256 is
 * stored. A keyed hash would add nothing here: with that much entropy a stolen table of digests can
 * be neither reversed nor brute-forced, and a key tied to SECRET_KEY would break on its rotation for
 * no gain. The row is found by its id, then the digests are compared with `timingSafeEqual`, so the
 * time an answer takes says nothing about how much of a guessed secret was right.
 */
export const USER_API_KEY_PREFIX = 'jmu_';

const TOKEN = /^jmu_([0-9a-f]{32})_([\w-]{43})$/;

/** Whether the presented bearer is spelled as a user key (not whether it is one). */
export function looksLikeUserApiKey(presented: string): boolean {
  return presented.startsWith(USER_API_KEY_PREFIX);
}

export function hashUserApiKeySecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** A new key: its id, the token handed out once, and the digest that is stored. */
export function newUserApiKey(): { keyId: string; token: string; secretHash: Buffer } {
  const keyId = randomUUID();
  const secret = randomBytes(32).toString('base64url');
  return { keyId, token: `${USER_API_KEY_PREFIX}${keyId.replaceAll('-', '')}_${secret}`, secretHash: hashUserApiKeySecret(secret) };
}

/** The key id and secret of a well-formed token, or undefined. */
export function parseUserApiKey(presented: string): { keyId: string; secret: string } | undefined {
  const m = TOKEN.exec(presented);
  if (!m) return undefined;
  const hex = m[1]!;
  return { keyId: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`, secret: m[2]! };
}

const NO_KEY = Buffer.alloc(32);

/**
 * Whether `secret` is the one whose digest is stored. Without a stored digest (no such key id) the
 * same work is done against zeros, so an unknown id and a wrong secret take the same time here.
 */
export function userApiKeySecretMatches(stored: Buffer | undefined, secret: string): boolean {
  const presented = hashUserApiKeySecret(secret);
  const against = stored?.length === presented.length ? stored : NO_KEY;
  return timingSafeEqual(against, presented) && stored !== undefined;
}
