/**
 * The memory page's one-time tokens: a sign-in code is exchanged once, a signed-out session stays
 * signed out until it would have expired anyway.
 */
import { purgeUserRef } from '../security/purge-user-ref';
import type { ServiceSecrets } from '../security/secrets';
import type { SubjectKeys } from '../security/subject';
import type { ServiceDeps } from '../shared/deps';

/** Redeems a sign-in code; false when it was redeemed before (by this or a concurrent request). */
export async function redeemSignInCode(deps: Pick<ServiceDeps, 'pageTokens'>, input: { codeId: string; expiresAt: Date; now: Date }): Promise<boolean> {
  // Rows of expired codes go first: the signature check refuses those by itself.
  await deps.pageTokens.deleteExpired({ now: input.now });
  return deps.pageTokens.markUsed({ tokenId: input.codeId, kind: 'code', expiresAt: input.expiresAt });
}

/** Ends a page session for good (sign-out). */
export async function endPageSession(deps: Pick<ServiceDeps, 'pageTokens'>, input: { sessionId: string; expiresAt: Date }): Promise<void> {
  await deps.pageTokens.markUsed({ tokenId: input.sessionId, kind: 'session', expiresAt: input.expiresAt });
}

/** Whether the page session was signed out. */
export async function isSignedOut(deps: Pick<ServiceDeps, 'pageTokens'>, sessionId: string): Promise<boolean> {
  return deps.pageTokens.isUsed({ tokenId: sessionId });
}

/**
 * Whether the user was purged after `issuedAtMs`: a page session or sign-in code from before a
 * purge is revoked by it. The purge's own audit row is the record (it outlives the user's rows and
 * names the user only by the keyed ref): a purge under way revokes what was issued before it was
 * requested, a completed one what was issued before it completed.
 */
export async function purgedSince(
  deps: Pick<ServiceDeps, 'purgeAudit'> & { secrets: ServiceSecrets; subjects: SubjectKeys },
  input: { tenantId: string; userId: string; issuedAtMs: number },
): Promise<boolean> {
  const userRef = purgeUserRef(deps.secrets, deps.subjects.userKey({ tenantId: input.tenantId, userId: input.userId }));
  const purges = await deps.purgeAudit.list({ tenantId: input.tenantId, userRef });
  return purges.some((p) => (p.completedAt ?? p.requestedAt).getTime() > input.issuedAtMs);
}
