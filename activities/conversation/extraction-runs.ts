import { Context } from '@temporalio/activity';
import { candidateFromDTO, type AppliedDecision, type CandidateDTO } from '../../src/core/dto';
import type { ServiceDeps } from '../../src/shared/deps';
import { extractRunPage, finishRunPass, type RunPage } from '../../src/conversation/extraction-runs';
import { applyCandidate } from '../../src/memory/memory-writer';
import { drainVectorOutbox, type DrainSummary } from '../../src/memory/outbox-drain';
import { asActivity } from '../shared/as-activity';
import { batchingEmbedder } from '../../src/conversation/extraction-embedder';
import { reminderRequestsFrom, type ReminderRequestDTO } from '../../src/proactive/reminder-requests';

export interface ExtractPageInput {
  userId: string;
  conversationId: string;
  /** Where the page starts; omitted for a run's first page: the conversation's watermark. */
  afterSeq?: number;
  limit: number;
}

/** A page as the workflow gets it: the service's page without its messages, with the reminder requests found in them. */
export type ExtractPageResult = Omit<RunPage, 'messages' | 'timeZone' | 'reminders'> & { reminders: ReminderRequestDTO[] };

export interface DecideCandidateInput {
  userId: string;
  conversationId: string;
  candidate: CandidateDTO;
  key: string;
  /** Moves the conversation's watermark to this seq in the decision's own transaction. */
  watermark?: number;
}

export type { DrainSummary };

/** Time the scheduled drain spends per activity before leaving the rest to the next tick. */
const DRAIN_BUDGET_MS = 40_000;

/** The attempt, as the holder of a page's lease: a retry is another attempt of the same activity. */
function attemptId(): string {
  const info = Context.current().info;
  return `${info.workflowExecution?.workflowId}/${info.workflowExecution?.runId}/${info.activityId}/${info.attempt}`;
}

/**
 * The activities of an incremental extraction run (workflows/conversation/extract-memories.ts) and of the
 * vector outbox drain (workflows/lifecycle/reconcilers.ts).
 */
export function createExtractionRunActivities(deps: ServiceDeps) {
  // The decisions running at once on this worker share embedder requests (src/conversation/extraction-embedder.ts);
  // built on the first decision, so the factory itself touches no dependency.
  let deciding: ServiceDeps | undefined;
  const decidingDeps = (): ServiceDeps => (deciding ??= { ...deps, embedder: batchingEmbedder(deps.embedder) });
  return {
    /**
     * One page of messages after the watermark (or `afterSeq`), extracted once: the extractor
     * heartbeats while it runs, and a retry reuses the page's stored output or waits for the
     * attempt still calling the model (src/conversation/extraction-runs.ts).
     */
    async extractPage(input: ExtractPageInput): Promise<ExtractPageResult> {
      return asActivity(async () => {
        const ctx = Context.current();
        const page = await extractRunPage(deps, input, { attemptId: attemptId(), heartbeat: (details) => ctx.heartbeat(details) });
        const { reminders, ...rest } = page;
        return {
          candidates: rest.candidates,
          messageCount: rest.messageCount,
          fromSeq: rest.fromSeq,
          lastSeq: rest.lastSeq,
          nextSeq: rest.nextSeq,
          coveredSeq: rest.coveredSeq,
          ...(rest.report ? { report: rest.report } : {}),
          reused: rest.reused,
          // In the activity's result, so the workflow history shows every message held out and why.
          quarantined: rest.quarantined,
          // Explicit reminder requests in these messages (found by the rule pool): the workflow starts one ReminderWorkflow each.
          reminders: reminderRequestsFrom(input.userId, input.conversationId, reminders, deps.config.proactive.reminderAckSeconds),
        };
      });
    },

    /** One keyed decision; with `watermark`, the watermark moves in the same transaction. */
    async decideCandidate(input: DecideCandidateInput): Promise<AppliedDecision> {
      const info = Context.current().info;
      const { userId, conversationId, watermark } = input;
      return asActivity(() =>
        applyCandidate(decidingDeps(), {
          userId,
          candidate: candidateFromDTO(input.candidate),
          key: input.key,
          audit: { workflowId: info.workflowExecution?.workflowId, runId: info.workflowExecution?.runId, conversationId, actor: `workflow:${info.workflowType}` },
          ...(watermark === undefined ? {} : { afterDecision: (tx) => tx.watermarks.advance({ userId, conversationId, seq: watermark }) }),
        }),
      );
    },

    /** Moves the watermark to what the run's pass covered; `more`: messages arrived after it. */
    async finishExtraction(input: { userId: string; conversationId: string; coveredSeq: number }): Promise<{ watermark: number; more: boolean }> {
      return asActivity(() => finishRunPass(deps, input));
    },

    /**
     * Drains due vector writes (one user's, or everyone's for the schedule) with per-entry backoff
     * and dead letters; never fails for an entry that Chroma refuses — the outbox keeps it.
     */
    async drainVectorOutbox(input: { userId?: string; budgetMs?: number }): Promise<DrainSummary> {
      return asActivity(async () => {
        const ctx = Context.current();
        return drainVectorOutbox(deps, { userId: input.userId, budgetMs: input.budgetMs ?? DRAIN_BUDGET_MS, onPass: (passes) => ctx.heartbeat({ passes }) });
      });
    },
  };
}
