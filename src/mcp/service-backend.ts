import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { ApiDeps } from '../api/deps';
import { reminderToView } from '../api/proactive-views';
import { memoryToView } from '../api/views';
import type { ConversationSearchResponse, MemoryView, ReminderView } from '../client/index';
import { forgetMemory } from '../memory/memory-lifecycle';
import { refuseByProvenance, storeMemory } from '../memory/memory-store';
import { writeAsRegistered } from '../account/settings';
import { recall, type AfterRecall } from '../recall/recall';
import { listReminders, snoozeReminder } from '../proactive/reminders';
import { searchConversations } from '../recall/conversation-search-use-case';
import { listScenes, sceneMemories } from '../persona/scenes';
import { MEMORY_SEARCH_ROUTES, type MemoryToolBackend } from './backend';

/** The user of an MCP request, as the auth hook resolved it, and what registering them needs. */
export interface McpUser {
  userKey: string;
  tenantId: string;
  /** The tenant's own id of the user. */
  externalId: string;
  /** The new-user budget of the tenant: may refuse (429) a user id seen for the first time. */
  admitNewUser: () => Promise<void>;
  /** Hears of a registration a refused call could not take back. */
  onTakeBackFailed: (err: unknown) => void;
}

/**
 * The tools inside the API process, on the services every route uses, for the user the auth hook
 * resolved from the key's tenant and the X-Memory-User header. Writes are audited with the actor
 * `mcp`.
 */
export function serviceBackend(deps: ApiDeps, user: McpUser, hooks: { afterRecall?: AfterRecall } = {}): MemoryToolBackend {
  const { userKey } = user;
  return {
    async searchMemories({ query, topK, types }) {
      const result = await recall(deps, userKey, query, { topK, types, routes: [...MEMORY_SEARCH_ROUTES] });
      if (result.memories.length > 0) hooks.afterRecall?.(userKey, result.memories, new Date());
      return {
        memories: result.memories.map((m) => ({ id: m.id, text: m.text, type: m.type, score: m.score, createdAt: m.createdAt, via: m.via })),
        error: result.error && { code: result.error.code, message: result.error.message },
      };
    },
    async searchConversations({ query, topK, timeZone }) {
      return (await searchConversations(deps, userKey, query, { topK, timeZone })) as ConversationSearchResponse;
    },
    /**
     * Registers the user per call, as POST …/memories does per request: the tool's arguments were
     * checked by its schema before this runs, the provenance screen comes before the registration
     * and the new-user budget, and a call refused later takes back the registration it made
     * before the refusal is answered (inside a 200, where no hook on the HTTP status could).
     */
    async addMemory({ text, type, importance, requestId }) {
      const body = { text, type, importance, requestId };
      const stored = await writeAsRegistered(deps, {
        user,
        beforeRegistering: async () => {
          refuseByProvenance(deps, body, 'mcp');
          await user.admitNewUser();
        },
        write: () => storeMemory(deps, userKey, body, 'mcp'),
        onTakeBackFailed: user.onTakeBackFailed,
      });
      // Still being stored after WORKFLOW_WAIT_TIMEOUT_MS: the same requestId joins the same
      // workflow, which goes on writing for the user, so the registration stays.
      if (stored.pending) throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'the memory is still being stored; repeat the call with the same requestId', { workflowId: stored.workflowId });
      return { memory: memoryToView(stored.memory) as MemoryView, decision: stored.decision };
    },
    async forgetMemory(id) {
      const result = await forgetMemory(deps, { userId: userKey, id, now: new Date(), audit: { actor: 'mcp' } });
      return { memory: memoryToView(result.memory) as MemoryView, changed: result.changed };
    },
    async listReminders({ status, limit }) {
      const reminders = await listReminders(deps, { userId: userKey, status, limit: limit ?? 20 });
      return reminders.map((r) => reminderToView(r) as ReminderView);
    },
    async snoozeReminder(id, seconds) {
      const { reminder } = await snoozeReminder(deps, userKey, id, seconds);
      return { id: reminder.id, accepted: true, action: 'snooze', workflowId: reminder.workflowId };
    },
    async sceneMemories({ sceneId, limit }) {
      if (!sceneId) return { scenes: (await listScenes(deps, { userId: userKey })).scenes, memories: [], total: 0 };
      const r = await sceneMemories(deps, { userId: userKey, sceneId, limit });
      return { scenes: [r.scene], scene: r.scene, memories: r.memories.map((m) => memoryToView(m) as MemoryView), total: r.total };
    },
  };
}
