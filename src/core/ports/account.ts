/** Ports of per-user API keys (src/core/ports.ts re-exports every port). */

/** A per-user API key as stored (issue #20): never the secret, and its digest only for authentication. */
export interface UserApiKeyRecord {
  keyId: string;
  /** The user key (pseudonym of tenant and user) the key is bound to. */
  userKey: string;
  tenantId: string;
  label: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  /** Updated at most once a minute, so authentication stays a read. */
  lastUsedAt: Date | null;
}

/** Per-user API keys (`user_api_keys`). Every method but `findForAuth` is scoped by the user key. */
export interface UserApiKeyRepository {
  /**
   * Stores a new key unless the user already holds `maxKeys` (their expired keys are deleted first);
   * undefined when they do. Concurrent creations for one user are serialised, so the bound holds.
   */
  create(input: { keyId: string; userKey: string; tenantId: string; secretHash: Buffer; label: string | null; expiresAt: Date | null; now: Date; maxKeys: number }): Promise<UserApiKeyRecord | undefined>;
  list(input: { userKey: string }): Promise<UserApiKeyRecord[]>;
  /** Deletes the key; false when the user has no key of that id. */
  delete(input: { userKey: string; keyId: string }): Promise<boolean>;
  /** The key of this id with its digest and its user's own id (the tenant's), to authenticate a request. */
  findForAuth(input: { keyId: string }): Promise<(UserApiKeyRecord & { secretHash: Buffer; externalUserId: string }) | undefined>;
  markUsed(input: { keyId: string; at: Date }): Promise<void>;
}
