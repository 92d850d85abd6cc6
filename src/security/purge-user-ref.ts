import type { ServiceSecrets } from './secrets';

/**
 * The audit's reference to a user: a MAC of the user key under its own HKDF purpose. Only the
 * service (holding SECRET_KEY) can compute it, so the audit table names nobody to a reader of the
 * database, yet "was this user purged?" can be answered by recomputing it. It sits with the
 * secrets, not in the purge, because the page tokens (account, the lowest capability) ask it too.
 */
export function purgeUserRef(secrets: ServiceSecrets, userKey: string): string {
  return secrets.mac('purge-audit', userKey).toString('hex').slice(0, 32);
}
