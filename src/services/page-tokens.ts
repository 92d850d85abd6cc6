/**
 * The memory page's one-time tokens: a sign-in code is exchanged once, a signed-out session stays
 * signed out until it would have expired anyway.
 */
import type { ServiceDeps } from './deps';

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
