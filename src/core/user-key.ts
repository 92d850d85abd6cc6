/**
 * The tenant part of a user key (`${tenantId}:${keyed hash}`, see src/security/subject.ts). Pure,
 * so workflows can label their children without the secret that made the key.
 */
export function tenantOfUserKey(userKey: string): string {
  const i = userKey.indexOf(':');
  return i > 0 ? userKey.slice(0, i) : '';
}
