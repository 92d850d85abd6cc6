import { Context } from '@temporalio/activity';
import { conversationStore } from '../src/adapters/postgres/conversation-repository';
import { candidateFromDTO, candidateToDTO, type AppliedDecision, type CandidateDTO } from '../src/core/dto';
import { ErrorCode, MemoryServiceError } from '../src/core/errors';
import { normalizeFact } from '../src/core/extraction/offline-extractor';
import { shortHash } from '../src/adapters/ids';
import type { MemoryCandidate } from '../src/core/types';
import type { ServiceDeps } from '../src/services/deps';
import type { ExtractionReport } from '../src/services/extractor';
import { applyCandidate } from '../src/services/memory-writer';
import { applyRecallReinforcement } from '../src/services/reinforcement';
import { syncVectors } from '../src/services/vector-sync';
import type { StoreMemoryInput } from '../workflows/types';
import { createEpisodeActivities } from './episodes';
import { withTypedFailures } from './failures';
import { createLifecycleActivities } from './lifecycle';
import { createProactiveActivities } from './proactive';
import { reminderRequestsOf, type ReminderRequestDTO } from './reminder-requests';

function auditOf(conversationId?: string) {
  const info = Context.current().info;
  return { workflowId: info.workflowExecution?.workflowId, runId: info.workflowExecution?.runId, conversationId, actor: `workflow:${info.workflowType}` };
}

/** Idempotency key of a candidate: the same messages saying the same thing give the same key. */
export function candidateKey(userId: string, conversationId: string, c: MemoryCandidate): string {
  return `extract:${userId}:${conversationId}:${c.messageIds.join(',')}:${shortHash(`${c.type}|${c.intent}|${normalizeFact(c.text)}`)}`;
}

/**
 * Activity implementations, built from injected dependencies so tests can pass real or fake ones.
 * Names read as what they do in Temporal UI's event history.
 */
export function createActivities(deps: ServiceDeps) {
  return {
    ...createLifecycleActivities(deps),
    ...createProactiveActivities(deps),
    ...createEpisodeActivities(deps),
    ...withTypedFailures({
      async storeMemory(input: StoreMemoryInput): Promise<AppliedDecision> {
        const at = new Date(input.at);
        const candidate: MemoryCandidate = {
          text: input.text,
          type: input.type,
          confidence: input.confidence ?? 1,
          importance: input.importance ?? 0.5,
          keywords: input.keywords ?? [],
          entities: [],
          relations: [],
          scope: input.scope ?? 'global',
          emotionTags: [],
          messageIds: [],
          role: 'user',
          saidAt: at,
          intent: 'assert',
          ...(input.expiresAt ? { expiresAt: new Date(input.expiresAt) } : {}),
        };
        return applyCandidate(deps, {
          userId: input.userId,
          candidate,
          key: `api:${input.requestId}`,
          audit: { ...auditOf(), actor: 'api' },
          via: 'api',
          metadata: input.metadata,
        });
      },

      async extractCandidates(input: { userId: string; conversationId: string; afterSeq: number; limit: number }): Promise<{ candidates: { candidate: CandidateDTO; key: string }[]; messageCount: number; nextSeq: number | null; report: ExtractionReport; reminders: ReminderRequestDTO[] }> {
        const messages = await conversationStore.page(deps.pool, input.userId, input.conversationId, input.afterSeq, input.limit);
        if (messages.length === 0 && input.afterSeq === 0) {
          throw new MemoryServiceError(ErrorCode.notFound, 'conversation has no messages', { conversationId: input.conversationId });
        }
        Context.current().heartbeat({ afterSeq: input.afterSeq });
        // Relative dates ("明天", "next Friday") resolve in the user's own timezone.
        const tz = await deps.pool.query<{ timezone: string }>('SELECT timezone FROM users WHERE user_id = $1', [input.userId]);
        const { candidates, report } = await deps.extractor.extract({ messages, timezone: tz.rows[0]?.timezone ?? 'UTC' });
        // Explicit reminder requests in these messages ("提醒我明天…"); the workflow starts one ReminderWorkflow each.
        const reminders = reminderRequestsOf(input.userId, input.conversationId, messages, tz.rows[0]?.timezone ?? 'UTC', deps.config.proactive.reminderAckSeconds);
        const seen = new Set<string>();
        const unique = candidates
          .map((c) => ({ candidate: candidateToDTO(c), key: candidateKey(input.userId, input.conversationId, c) }))
          .filter((c) => (seen.has(c.key) ? false : (seen.add(c.key), true)));
        return {
          candidates: unique,
          messageCount: messages.length,
          // In the activity result, so Temporal UI shows which extractor ran and any bad model output.
          report,
          reminders,
          nextSeq: messages.length < input.limit ? null : messages[messages.length - 1]!.seq,
        };
      },

      async decideAndApply(input: { userId: string; conversationId: string; candidate: CandidateDTO; key: string }): Promise<AppliedDecision> {
        return applyCandidate(deps, {
          userId: input.userId,
          candidate: candidateFromDTO(input.candidate),
          key: input.key,
          audit: auditOf(input.conversationId),
        });
      },

      async reconcileVectors(input: { userId?: string }): Promise<{ upserted: number; removed: number; failed: number }> {
        const result = await syncVectors(deps, { userId: input.userId });
        if (result.failed > 0) throw new MemoryServiceError(ErrorCode.vectorStoreUnavailable, `${result.failed} vector writes still pending`);
        return result;
      },

      async applyRecallReinforcement(input: { userId: string; recalls: { memoryIds: string[]; at: string }[]; batchKey: string }): Promise<{ reinforced: number; skipped: number }> {
        const info = Context.current().info;
        return applyRecallReinforcement(deps, { ...input, workflowId: info.workflowExecution?.workflowId, runId: info.workflowExecution?.runId });
      },

      async markConversationExtracted(input: { userId: string; conversationId: string; workflowId: string }): Promise<void> {
        await conversationStore.markExtracted(deps.pool, input.userId, input.conversationId);
      },
    }),
  };
}
