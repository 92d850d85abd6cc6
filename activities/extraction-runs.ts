import { Context } from '@temporalio/activity';
import { postgresOutboxRetries } from '../src/adapters/postgres/outbox-retry-repository';
import { candidateFromDTO, type AppliedDecision, type CandidateDTO } from '../src/core/dto';
import type { ServiceDeps } from '../src/services/deps';
import { extractRunPage, finishRunPass, type KeyedCandidate } from '../src/services/extraction-runs';
import type { ExtractionReport } from '../src/core/ports';
import { applyCandidate } from '../src/services/memory-writer';
import { drainOutbox, type DrainResult } from '../src/services/outbox-drain';
import { asActivity } from './as-activity';
import { reminderRequestsOf, type ReminderRequestDTO } from '../src/services/reminder-requests';

export interface ExtractPageInput {
  userId: string;
  conversationId: string;
  /** Where the page starts; omitted for a run's first page: the conversation's watermark. */
  afterSeq?: number;
  limit: number;
}

export interface ExtractPageResult {
  candidates: KeyedCandidate[];
  messageCount: number;
  fromSeq: number;
  lastSeq: number | null;
  nextSeq: number | null;
  coveredSeq: number;
  /** In the activity result, so Temporal UI shows which extractor ran and any bad model output. */
  report?: ExtractionReport;
  /** True when an earlier attempt's (or run's) output for this very page was reused: no model call. */
  reused: boolean;
  reminders: ReminderRequestDTO[];
}

export interface DecideCandidateInput {
  userId: string;
  conversationId: string;
  candidate: CandidateDTO;
  key: string;
  /** Moves the conversation's watermark to this seq in the decision's own transaction. */
  watermark?: number;
}

export interface DrainSummary extends DrainResult {
  passes: number;
}

/** Time the scheduled drain spends per activity before leaving the rest to the next tick. */
const DRAIN_BUDGET_MS = 40_000;

/** The attempt, as the holder of a page's lease: a retry is another attempt of the same activity. */
function attemptId(): string {
  const info = Context.current().info;
  return `${info.workflowExecution?.workflowId}/${info.workflowExecution?.runId}/${info.activityId}/${info.attempt}`;
}

/**
 * The activities of an incremental extraction run (workflows/extract-memories.ts) and of the
 * vector outbox drain (workflows/reconcilers.ts).
 */
export function createExtractionRunActivities(deps: ServiceDeps) {
  return {
    /**
     * One page of messages after the watermark (or `afterSeq`), extracted once: the extractor
     * heartbeats while it runs, and a retry reuses the page's stored output or waits for the
     * attempt still calling the model (src/services/extraction-runs.ts).
     */
    async extractPage(input: ExtractPageInput): Promise<ExtractPageResult> {
      return asActivity(async () => {
        const ctx = Context.current();
        const page = await extractRunPage(deps, input, { attemptId: attemptId(), heartbeat: (details) => ctx.heartbeat(details) });
        const { messages, timeZone, ...rest } = page;
        return {
          candidates: rest.candidates,
          messageCount: rest.messageCount,
          fromSeq: rest.fromSeq,
          lastSeq: rest.lastSeq,
          nextSeq: rest.nextSeq,
          coveredSeq: rest.coveredSeq,
          ...(rest.report ? { report: rest.report } : {}),
          reused: rest.reused,
          // Proactive memory (issue #7): explicit reminder requests in these messages.
          reminders: reminderRequestsOf(input.userId, input.conversationId, messages, timeZone, deps.config.proactive.reminderAckSeconds),
        };
      });
    },

    /** One keyed decision; with `watermark`, the watermark moves in the same transaction. */
    async decideCandidate(input: DecideCandidateInput): Promise<AppliedDecision> {
      const info = Context.current().info;
      const { userId, conversationId, watermark } = input;
      return asActivity(() =>
        applyCandidate(deps, {
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
        const deadline = Date.now() + (input.budgetMs ?? DRAIN_BUDGET_MS);
        const summary: DrainSummary = { upserted: 0, removed: 0, failed: 0, deadLettered: 0, stoppedEarly: false, passes: 0 };
        const outbox = postgresOutboxRetries(deps.pool);
        for (;;) {
          const pass = await drainOutbox({ outbox, vectors: deps.vectors, embedder: deps.embedder }, { policy: deps.config.reliability.outbox, userId: input.userId, limit: 200 });
          summary.passes++;
          summary.upserted += pass.upserted;
          summary.removed += pass.removed;
          summary.failed += pass.failed;
          summary.deadLettered += pass.deadLettered;
          summary.stoppedEarly ||= pass.stoppedEarly;
          ctx.heartbeat({ passes: summary.passes });
          // Stop when nothing more went through (only failures or nothing due) or the budget is spent.
          if (pass.upserted + pass.removed === 0 || pass.stoppedEarly || Date.now() > deadline) return summary;
        }
      });
    },
  };
}
