import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Typed keys for the attributes registered by the stack (src/core/search-attributes.ts): ids and
// enums only — search attributes are not encrypted.
export const MemoryUserIdKey = defineSearchAttributeKey('MemoryUserId', SearchAttributeType.KEYWORD);
export const ConversationIdKey = defineSearchAttributeKey('ConversationId', SearchAttributeType.KEYWORD);
export const MemoryDecisionsKey = defineSearchAttributeKey('MemoryDecisions', SearchAttributeType.KEYWORD_LIST);
export const ReminderStatusKey = defineSearchAttributeKey('ReminderStatus', SearchAttributeType.KEYWORD);
