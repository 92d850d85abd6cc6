import type { RateLimitBudget } from '../config';
import { MemoryTool } from './tools-names';

/** The tools/call requests in an MCP POST body (one JSON-RPC message or a batch of them). */
export function mcpToolCalls(body: unknown): { name: string; arguments: Record<string, unknown> }[] {
  const messages = Array.isArray(body) ? body : [body];
  const calls: { name: string; arguments: Record<string, unknown> }[] = [];
  for (const m of messages) {
    if (typeof m !== 'object' || m === null) continue;
    const { method, params } = m as { method?: unknown; params?: { name?: unknown; arguments?: unknown } };
    if (method !== 'tools/call' || typeof params?.name !== 'string') continue;
    const args = typeof params.arguments === 'object' && params.arguments !== null ? (params.arguments as Record<string, unknown>) : {};
    calls.push({ name: params.name, arguments: args });
  }
  return calls;
}

/** What each tool spends, as the HTTP route it stands for: searches are recall, writes are writes, a stored memory asks the conflict judge (llm). */
const TOOL_BUDGETS: Record<MemoryTool, RateLimitBudget[]> = {
  [MemoryTool.memorySearch]: ['recall'],
  [MemoryTool.conversationSearch]: ['recall'],
  [MemoryTool.memoryAdd]: ['writes', 'llm'],
  [MemoryTool.memoryForget]: ['writes'],
  [MemoryTool.remindersList]: [],
  [MemoryTool.reminderSnooze]: ['writes'],
  [MemoryTool.memoryScene]: ['recall'],
};

/**
 * The budgets one POST /mcp spends: those of every tool it calls, once per call (the limiter
 * counts each entry, so a batch of ten searches spends ten). Initialisation and tools/list spend
 * none; an unknown tool spends none (the server refuses it).
 */
export function mcpBudgets(body: unknown): RateLimitBudget[] {
  return mcpToolCalls(body).flatMap((call) => TOOL_BUDGETS[call.name as MemoryTool] ?? []);
}
