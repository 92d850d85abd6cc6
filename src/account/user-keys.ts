/**
 * Per-user API keys (issue #20): credentials an end user's device may hold. The tenant key names
 * any user of the tenant; a user key reaches its own user only (src/api/auth.ts enforces where).
 * Minting, listing and revoking are the tenant's (its server's) business.
 */
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { UserApiKeyRecord } from '../core/ports/account';
import { newUserApiKey, parseUserApiKey, userApiKeySecretMatches } from '../security/user-api-key-token';
import type { ServiceDeps } from '../shared/deps';

export type UserKeyDeps = Pick<ServiceDeps, 'userApiKeys'>;

/** Keys one user may hold at once: listing stays small, and a leaked tenant key cannot fill the table through one user. */
export const MAX_KEYS_PER_USER = 20;

/** `last_used_at` is written when it is older than this, so a busy key does not turn every request into a write. */
export const LAST_USED_PRECISION_MS = 60_000;

/** A key as shown to the tenant: never the secret, never its digest. */
export type UserKeyView = Omit<UserApiKeyRecord, 'userKey' | 'tenantId'>;

const view = (r: UserApiKeyRecord): UserKeyView => ({ keyId: r.keyId, label: r.label, createdAt: r.createdAt, expiresAt: r.expiresAt, lastUsedAt: r.lastUsedAt });

/** Refuses an expiry that is not in the future (validation_failed); needs nothing stored, so it can run before the user is registered. */
export function refusePastExpiry(expiresAt: Date | undefined, now: Date): void {
  if (expiresAt && expiresAt.getTime() <= now.getTime()) {
    throw new MemoryServiceError(ErrorCode.validationFailed, 'expiresAt must be in the future', { field: 'expiresAt' });
  }
}

/** Mints a key for the user; the token is in the answer only, it cannot be read again. */
export async function mintUserKey(
  deps: UserKeyDeps,
  input: { userKey: string; tenantId: string; label?: string; expiresAt?: Date; now: Date },
): Promise<{ key: UserKeyView; token: string }> {
  refusePastExpiry(input.expiresAt, input.now);
  const fresh = newUserApiKey();
  const stored = await deps.userApiKeys.create({
    keyId: fresh.keyId,
    userKey: input.userKey,
    tenantId: input.tenantId,
    secretHash: fresh.secretHash,
    label: input.label ?? null,
    expiresAt: input.expiresAt ?? null,
    now: input.now,
    maxKeys: MAX_KEYS_PER_USER,
  });
  if (!stored) throw new MemoryServiceError(ErrorCode.conflict, `this user holds ${MAX_KEYS_PER_USER} keys already: revoke one first`, { reason: 'too_many_keys', limit: MAX_KEYS_PER_USER });
  return { key: view(stored), token: fresh.token };
}

export async function listUserKeys(deps: UserKeyDeps, input: { userKey: string }): Promise<UserKeyView[]> {
  return (await deps.userApiKeys.list(input)).map(view);
}

/** Revokes (deletes) the key; 404 when the user has no key of that id — revoked before, or never theirs. */
export async function revokeUserKey(deps: UserKeyDeps, input: { userKey: string; keyId: string }): Promise<void> {
  if (!(await deps.userApiKeys.delete(input))) throw new MemoryServiceError(ErrorCode.notFound, 'no such key for this user', { keyId: input.keyId });
}

/** Who a valid user key speaks for. */
export interface UserKeyCredential {
  keyId: string;
  tenantId: string;
  /** The user key (storage pseudonym) the key is bound to. */
  userKey: string;
  /** The tenant's own id of that user, as paths and X-Memory-User name it. */
  userId: string;
}

const refused = (reason: 'invalid' | 'expired') =>
  new MemoryServiceError(ErrorCode.unauthorized, reason === 'expired' ? 'this user key has expired' : 'unknown API key', { reason });

/**
 * The user a presented `jmu_…` token speaks for; 401 when it is malformed, unknown, revoked (its
 * row is gone) or expired. One indexed read; a write at most once a minute for `lastUsedAt`.
 */
export async function authenticateUserKey(deps: UserKeyDeps, presented: string, now: Date): Promise<UserKeyCredential> {
  const parsed = parseUserApiKey(presented);
  if (!parsed) throw refused('invalid');
  const row = await deps.userApiKeys.findForAuth({ keyId: parsed.keyId });
  if (!userApiKeySecretMatches(row?.secretHash, parsed.secret) || !row) throw refused('invalid');
  if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) throw refused('expired');
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_PRECISION_MS) await deps.userApiKeys.markUsed({ keyId: row.keyId, at: now });
  return { keyId: row.keyId, tenantId: row.tenantId, userKey: row.userKey, userId: row.externalUserId };
}
