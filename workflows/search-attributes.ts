import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import { tenantOfUserKey } from '../src/core/user-key';

// Typed keys for the attributes registered by the stack (src/core/search-attributes.ts): ids and
// enums only — search attributes are not encrypted.
export const MemoryUserIdKey = defineSearchAttributeKey('MemoryUserId', SearchAttributeType.KEYWORD);
export const MemoryTenantKey = defineSearchAttributeKey('MemoryTenant', SearchAttributeType.KEYWORD);
export const ConversationIdKey = defineSearchAttributeKey('ConversationId', SearchAttributeType.KEYWORD);
export const MemoryDecisionsKey = defineSearchAttributeKey('MemoryDecisions', SearchAttributeType.KEYWORD_LIST);
export const ReminderStatusKey = defineSearchAttributeKey('ReminderStatus', SearchAttributeType.KEYWORD);

/**
 * What every per-user workflow carries: the user key (a keyed pseudonym, never the tenant's own
 * user id) and its tenant, so an auditor filters by either and purge finds every execution.
 */
export function userSearchAttributes(userKey: string): SearchAttributePair[] {
  return [
    { key: MemoryUserIdKey, value: userKey },
    { key: MemoryTenantKey, value: tenantOfUserKey(userKey) },
  ];
}
