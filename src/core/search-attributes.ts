/**
 * Custom Temporal search attributes of this project. They hold ids and enums only: search
 * attributes are never encrypted, so no memory text or personal data may go in them.
 */
export const SEARCH_ATTRIBUTES = {
  MemoryUserId: 'Keyword',
  MemoryTenant: 'Keyword',
  ConversationId: 'Keyword',
  MemoryDecisions: 'KeywordList',
  ReminderStatus: 'Keyword',
} as const;
export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTES;
