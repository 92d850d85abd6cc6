import { Context } from '@temporalio/activity';
import { candidateFromDTO, type AppliedDecision, type CandidateDTO } from '../../src/core/dto';
import { ErrorCode, MemoryServiceError } from '../../src/core/errors';
import type { ServiceDeps } from '../../src/shared/deps';
import type { ExtractionReport } from '../../src/core/ports/conversation';
import { extractCandidates } from '../../src/conversation/extraction';
import { markConversationExtracted } from '../../src/conversation/extraction-runs';
import { applyCandidate } from '../../src/memory/memory-writer';
import { syncVectors } from '../../src/memory/vector-sync';
import { reminderRequestsOf, type ReminderRequestDTO } from '../../src/proactive/reminder-requests';
import { auditOf } from '../shared/audit';
import { withTypedFailures } from '../shared/failures';

/**
 * The steps of ExtractMemories' per-candidate path (pages of candidates, one decision each, the
 * vectors, the watermark), in a factory of their own so the workflow types what it calls. The
 * names are the ones recorded histories replay.
 */
export function createExtractionActivities(deps: ServiceDeps) {
  return withTypedFailures({
    async extractCandidates(input: { userId: string; conversationId: string; afterSeq: number; limit: number }): Promise<{ candidates: { candidate: CandidateDTO; key: string }[]; messageCount: number; nextSeq: number | null; report: ExtractionReport; reminders: ReminderRequestDTO[] }> {
      // The extractor may call a model or the embedder (the recall net embeds its exemplars on
      // first use): keep heartbeating so a slow but healthy call is not taken for a dead worker.
      const activity = Context.current();
      const beat = () => activity.heartbeat({ afterSeq: input.afterSeq });
      const timer = setInterval(beat, 5_000);
      const page = await extractCandidates(deps, { ...input, onProgress: beat }).finally(() => clearInterval(timer));
      return {
        candidates: page.candidates,
        messageCount: page.messageCount,
        // In the activity result, so Temporal UI shows which extractor ran and any bad model output.
        report: page.report,
        // Explicit reminder requests in these messages ("提醒我明天…"); the workflow starts one ReminderWorkflow each.
        reminders: reminderRequestsOf(input.userId, input.conversationId, page.messages, page.timeZone, deps.config.proactive.reminderAckSeconds),
        nextSeq: page.nextSeq,
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

    async markConversationExtracted(input: { userId: string; conversationId: string; workflowId: string }): Promise<void> {
      await markConversationExtracted(deps, input);
    },
  });
}
