import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import { SearchAttribute } from '../../src/client/temporal-contract';
import { tenantOfUserKey } from '../../src/core/user-key';

/**
 * The custom Temporal search attributes of this project as typed keys: workflows and the API set
 * them through these, and the stack registers exactly these on a server ({@link SEARCH_ATTRIBUTES}).
 * Their names are the client's (`SearchAttribute` in src/client/temporal-contract.ts), which callers query
 * by, so the two cannot drift. They hold ids and enums only: search attributes are never
 * encrypted, so no memory text or personal data may go in them.
 */
export const MemoryUserIdKey = defineSearchAttributeKey(SearchAttribute.userKey, SearchAttributeType.KEYWORD);
export const MemoryTenantKey = defineSearchAttributeKey(SearchAttribute.tenant, SearchAttributeType.KEYWORD);
export const ConversationIdKey = defineSearchAttributeKey(SearchAttribute.conversation, SearchAttributeType.KEYWORD);
export const MemoryDecisionsKey = defineSearchAttributeKey(SearchAttribute.decisions, SearchAttributeType.KEYWORD_LIST);
export const ReminderStatusKey = defineSearchAttributeKey(SearchAttribute.reminderStatus, SearchAttributeType.KEYWORD);

const KEYS = [MemoryUserIdKey, MemoryTenantKey, ConversationIdKey, MemoryDecisionsKey, ReminderStatusKey] as const;

export type SearchAttributeName = (typeof KEYS)[number]['name'];

/** The types these keys use, as the Temporal CLI (`--search-attribute Name=Type`) and operator API name them. */
const REGISTERED_TYPE = { [SearchAttributeType.KEYWORD]: 'Keyword', [SearchAttributeType.KEYWORD_LIST]: 'KeywordList' } as const;

/** Name → type of every attribute above, for registering them with a Temporal server. */
export const SEARCH_ATTRIBUTES: Readonly<Record<SearchAttributeName, (typeof REGISTERED_TYPE)[keyof typeof REGISTERED_TYPE]>> = Object.fromEntries(
  KEYS.map((k) => [k.name, REGISTERED_TYPE[k.type]]),
) as Record<SearchAttributeName, (typeof REGISTERED_TYPE)[keyof typeof REGISTERED_TYPE]>;

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
