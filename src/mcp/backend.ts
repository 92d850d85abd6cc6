import { ALL_ROUTES, RecallRoute } from '../core/recall/routes';
import { isWorkflowPending, MemoryApiError, type ConversationSearchResponse, type MemoryClient, type MemoryType, type MemoryView, type ReminderActionAccepted, type ReminderStatus, type ReminderView, type SceneView, type WorkflowPending } from '../client/index';

/** One memory a search found. */
export interface FoundMemory {
  id: string;
  text: string;
  type: string;
  score: number;
  createdAt: string;
  via: MemoryView['via'];
}

/**
 * What the MCP tools do, for one user: the same operations whether the tools run inside the API
 * (Streamable HTTP at /mcp: the services themselves) or in a stdio process that reaches the API
 * over HTTP with a key (`npm run mcp`).
 */
export interface MemoryToolBackend {
  searchMemories(input: { query: string; topK?: number; types?: MemoryType[] }): Promise<{ memories: FoundMemory[]; error?: { code: string; message: string } }>;
  searchConversations(input: { query: string; topK?: number; timeZone?: string }): Promise<ConversationSearchResponse>;
  addMemory(input: { text: string; type?: MemoryType; importance?: number; requestId?: string }): Promise<{ memory: MemoryView; decision: { action: string; reason: string } }>;
  forgetMemory(id: string): Promise<{ memory: MemoryView; changed: boolean }>;
  listReminders(input: { status?: ReminderStatus; limit?: number }): Promise<ReminderView[]>;
  snoozeReminder(id: string, seconds: number): Promise<ReminderActionAccepted>;
  /** One scene's memories (scene navigation drill-down); without `sceneId`, the scenes. */
  sceneMemories(input: { sceneId?: string; limit?: number }): Promise<{ scenes: SceneView[]; scene?: SceneView; memories: MemoryView[]; total: number }>;
}

/** Recall's memory routes: the raw past exchanges are conversation_search's. */
export const MEMORY_SEARCH_ROUTES: readonly RecallRoute[] = ALL_ROUTES.filter((r) => r !== RecallRoute.exchanges);

/**
 * A tool answers with what was done; a 202 (the workflow outlasted the server's wait) is an error
 * the agent can act on, as the in-process tools raise it, not an answer without a memory.
 */
function settled<T extends object>(answer: T | WorkflowPending, stillRunning: string): T {
  if (isWorkflowPending(answer)) throw new MemoryApiError(202, 'workflowUnavailable', stillRunning, { workflowId: answer.workflowId });
  return answer as T;
}

/** The tools over the HTTP API, as the stdio server runs them: the key decides the tenant, as for any client. */
export function httpBackend(client: MemoryClient, userId: string): MemoryToolBackend {
  return {
    async searchMemories({ query, topK, types }) {
      const r = await client.recall(userId, { query, topK, types, routes: [...MEMORY_SEARCH_ROUTES] });
      return { memories: r.memories.map((m) => ({ id: m.id, text: m.text, type: m.type, score: m.score, createdAt: m.createdAt, via: m.via })), error: r.error };
    },
    searchConversations: (input) => client.searchConversations(userId, input),
    addMemory: async (input) => settled(await client.createMemory(userId, { ...input, via: 'mcp' }), 'the memory is still being stored; repeat the call with the same requestId'),
    forgetMemory: async (id) => settled(await client.forgetMemory(userId, id), 'the memory is still being forgotten; repeat the call'),
    listReminders: async (input) => (await client.listReminders(userId, input)).reminders,
    snoozeReminder: (id, seconds) => client.snoozeReminder(userId, id, seconds),
    async sceneMemories({ sceneId, limit }) {
      if (!sceneId) return { scenes: (await client.listScenes(userId)).scenes, memories: [], total: 0 };
      const r = await client.sceneMemories(userId, sceneId, { limit });
      return { scenes: [r.scene], scene: r.scene, memories: r.memories, total: r.total };
    },
  };
}
