/** The MCP tool names, as clients and the rate limits know them (no SDK import: the API's rate limits read it). */
export const MemoryTool = {
  memorySearch: 'memory_search',
  conversationSearch: 'conversation_search',
  memoryAdd: 'memory_add',
  memoryForget: 'memory_forget',
  remindersList: 'reminders_list',
  reminderSnooze: 'reminder_snooze',
  memoryScene: 'memory_scene',
} as const;
export type MemoryTool = (typeof MemoryTool)[keyof typeof MemoryTool];

/** The header that names the user on /mcp and on the proxy (lower case, as Node hands headers over). */
export const MEMORY_USER_HEADER = 'x-memory-user';
