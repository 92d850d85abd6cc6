import { Context } from '@temporalio/activity';
import { z } from 'zod';
import { conversationIdSchema, isoDate, messageIdSchema, textSchema, userIdSchema } from '../../src/api/schemas';
import { MEMORY_CONTRACT_VERSION, reminderWorkflowId, type ExtractedReminder, type MemoryCaller } from '../../src/client/temporal-contract';
import { ErrorCode, MemoryServiceError } from '../../src/core/errors';
import type { SubjectKeys } from '../../src/security/subject';
import type { ServiceDeps } from '../../src/shared/deps';
import { withTypedFailures } from '../shared/failures';
import { allConversationMessages, storeCallerMessages } from '../../src/conversation/conversation-messages';
import { conversationReminderRequests } from '../../src/proactive/reminder-requests';

/**
 * What the Temporal entry points for callers need besides the services: the user key of
 * (tenant, user) and the tenants this deployment serves. A caller on the namespace is trusted as
 * an operator-level integration (docs/integrate-temporal.md); the tenant it names must still be
 * one of ours, so a typo cannot create users under a tenant no API key reaches.
 */
export interface CallerDeps {
  subjects: SubjectKeys;
  tenants: readonly { tenantId: string }[];
}

const callerSchema = z.object({
  tenantId: z.string().min(1).max(64),
  userId: userIdSchema,
  contractVersion: z.number().int().positive().optional(),
});

function invalid(err: z.ZodError): MemoryServiceError {
  const issue = err.issues[0];
  return new MemoryServiceError(ErrorCode.validationFailed, `${issue?.path.join('..') || 'input'}: ${issue?.message ?? 'invalid'}`, { issues: err.issues.map((i) => ({ path: i.path.join('..'), message: i.message })) });
}

/** Parses with a schema; a mismatch is a validation_failed refusal (never retried). */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalid(parsed.error);
  return parsed.data;
}

/**
 * The user key of a caller's (tenant, user): refuses an unknown tenant and a contract version
 * newer than this service's (`forbidden`, non-retryable), an invalid user id (`validation_failed`).
 */
export function callerUserKey(deps: CallerDeps, input: MemoryCaller): string {
  const caller = parseInput(callerSchema, { tenantId: input?.tenantId, userId: input?.userId, contractVersion: input?.contractVersion });
  if (!deps.tenants.some((t) => t.tenantId === caller.tenantId)) {
    throw new MemoryServiceError(ErrorCode.forbidden, `tenant "${caller.tenantId}" is not configured on this memory service`, { tenantId: caller.tenantId });
  }
  if (caller.contractVersion !== undefined && caller.contractVersion > MEMORY_CONTRACT_VERSION) {
    throw new MemoryServiceError(ErrorCode.forbidden, `contract version ${caller.contractVersion} is newer than this service's (${MEMORY_CONTRACT_VERSION})`, { supported: MEMORY_CONTRACT_VERSION });
  }
  return deps.subjects.userKey({ tenantId: caller.tenantId, userId: caller.userId });
}

/**
 * Activities of the `ExtractMemories` workflow (workflows/conversation/caller-extraction.ts): who the caller
 * means, storing the messages it sent, and the reminders its conversation asked for.
 */
export function createCallerExtractionActivities(deps: ServiceDeps, callers: CallerDeps) {
  const { maxMessageChars, maxMessagesPerConversation } = deps.config.extraction;
  const message = z.object({ id: messageIdSchema, role: z.enum(['user', 'assistant']), content: textSchema(maxMessageChars), at: isoDate.optional() });
  const messagesSchema = z.array(message).max(1000);

  return withTypedFailures({
    /** The user key and the conversation's keyed reference (for the workflow ids and search attributes). */
    async resolveCallerConversation(input: MemoryCaller & { conversationId: string }): Promise<{ userKey: string; conversationRef: string }> {
      const userKey = callerUserKey(callers, input);
      const conversationId = parseInput(conversationIdSchema, input.conversationId);
      return { userKey, conversationRef: callers.subjects.ref(userKey, 'conversation', conversationId) };
    },

    /**
     * Stores a caller's messages as `POST …/conversations/{id}/messages` does: the user is
     * registered on first write, message ids dedupe, the per-conversation cap holds. The input's
     * own refusals come first, so a refused first write registers nobody.
     */
    async storeCallerMessages(input: { userKey: string; tenantId: string; userId: string; conversationId: string; messages: unknown[] }): Promise<{ inserted: string[]; duplicates: string[] }> {
      const externalId = parseInput(userIdSchema, input.userId);
      const conversationId = parseInput(conversationIdSchema, input.conversationId);
      const messages = parseInput(messagesSchema, input.messages);
      if (new Set(messages.map((m) => m.id)).size !== messages.length) throw new MemoryServiceError(ErrorCode.validationFailed, 'message ids must be unique within a request');
      if (messages.length === 0) return { inserted: [], duplicates: [] };
      const receivedAt = new Date();
      // The same store as the messages route: the size cap holds from either side.
      return storeCallerMessages(deps, {
        user: { userKey: input.userKey, tenantId: input.tenantId, externalId },
        conversationId,
        messages: messages.map((m) => ({ id: m.id, role: m.role, content: m.content, at: m.at ? new Date(m.at) : receivedAt, truncated: false })),
        maxMessages: maxMessagesPerConversation,
        onTakeBackFailed: (err) => Context.current().log.warn('a refused first write could not take its user registration back', { error: err }),
      });
    },

    /**
     * The reminders this conversation's messages asked for: the same detection and the same
     * deterministic ids as the extraction that started their workflows, so the ids are right
     * whether or not the workflows have written their rows yet.
     */
    async conversationReminders(input: { userKey: string; conversationId: string }): Promise<ExtractedReminder[]> {
      const requests = await conversationReminderRequests(deps, (q) => allConversationMessages(deps, q), { userId: input.userKey, conversationId: input.conversationId, onPage: (afterSeq) => Context.current().heartbeat(afterSeq) });
      return requests.map((r): ExtractedReminder => {
        const source = r.source as { messageId?: string };
        return { reminderId: r.reminderId, workflowId: reminderWorkflowId(input.userKey, r.reminderId), messageId: source.messageId ?? '', text: r.text, dueAt: r.dueAt, timeZone: r.timeZone };
      });
    },
  });
}
