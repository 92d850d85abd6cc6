import { Context } from '@temporalio/activity';
import { candidateFromDTO, type AppliedDecision, type CandidateDTO } from '../../src/core/dto';
import type { ServiceDeps } from '../../src/shared/deps';
import { extractRunPage, finishRunPass, pageEmbedder, type KeyedCandidate, type RunPage } from '../../src/conversation/extraction-runs';
import { applyCandidate } from '../../src/memory/memory-writer';
import { drainVectorOutbox, type DrainSummary } from '../../src/memory/outbox-drain';
import { writeEpisodes, type WriteEpisodesResult } from '../../src/conversation/episodes';
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

export interface DecideCandidatesInput {
  userId: string;
  conversationId: string;
  /** The page's candidates in message order, each decided in a transaction of its own. */
  candidates: KeyedCandidate[];
  /** Moves the conversation's watermark to this seq in the transaction of the last decision. */
  watermark?: number;
}

/** A decision as Temporal UI lists it: the applied decision and the key it is recorded under. */
export type KeyedDecision = AppliedDecision & { key: string };

export interface FinishPassResult {
  watermark: number;
  more: boolean;
  /** Absent when the pass read no message (nothing to drain or summarise). */
  vectors?: DrainSummary;
  episodes?: WriteEpisodesResult;
}

export type { DrainSummary };

/** Time the scheduled drain spends per activity before leaving the rest to the next tick. */
const DRAIN_BUDGET_MS = 40_000;
/** Time a pass's end spends on its user's vectors; the rest is left to the scheduled drain. */
const PASS_DRAIN_BUDGET_MS = 20_000;

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
  const audit = (conversationId: string) => {
    const info = Context.current().info;
    return { workflowId: info.workflowExecution?.workflowId, runId: info.workflowExecution?.runId, conversationId, actor: `workflow:${info.workflowType}` };
  };
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

    /** One keyed decision; with `watermark`, the watermark moves in the same transaction. Histories of runs before per-page decisions replay it. */
    async decideCandidate(input: DecideCandidateInput): Promise<AppliedDecision> {
      const { userId, conversationId, watermark } = input;
      return asActivity(() =>
        applyCandidate(decidingDeps(), {
          userId,
          candidate: candidateFromDTO(input.candidate),
          key: input.key,
          audit: audit(conversationId),
          ...(watermark === undefined ? {} : { afterDecision: (tx) => tx.watermarks.advance({ userId, conversationId, seq: watermark }) }),
        }),
      );
    },

    /**
     * A page's decisions in message order, one activity instead of one per candidate (each costs
     * the Temporal server and the worker a schedule, a start, a completion and a workflow task).
     * Each decision is still its own audited transaction under its own key, so a retry of the page
     * replays what an earlier attempt decided (`replayed`) and applies only the rest; the watermark
     * moves with the last decision. Heartbeats (after each decision, and every 5 s) let a crashed
     * worker's page be retried within the heartbeat timeout however long the page is.
     */
    async decideCandidates(input: DecideCandidatesInput): Promise<{ decisions: KeyedDecision[] }> {
      const { userId, conversationId, candidates, watermark } = input;
      return asActivity(async () => {
        const ctx = Context.current();
        const decisions: KeyedDecision[] = [];
        // Beats on a timer too: one request for the page's texts, or a decision's conflict judge,
        // may outlast the heartbeat timeout on a busy machine without the worker being dead.
        const beat = setInterval(() => ctx.heartbeat({ decided: decisions.length, of: candidates.length }), 5_000);
        try {
          // The page's candidate texts go to the embedder in one request, not one each.
          const base = decidingDeps();
          const page = { ...base, embedder: await pageEmbedder(base.embedder, candidates.map((c) => candidateFromDTO(c.candidate))) };
          for (const [i, item] of candidates.entries()) {
            const last = i === candidates.length - 1;
            const decision = await applyCandidate(page, {
              userId,
              candidate: candidateFromDTO(item.candidate),
              key: item.key,
              audit: audit(conversationId),
              ...(last && watermark !== undefined ? { afterDecision: (tx) => tx.watermarks.advance({ userId, conversationId, seq: watermark }) } : {}),
            });
            decisions.push({ ...decision, key: item.key });
            ctx.heartbeat({ decided: i + 1, of: candidates.length });
          }
          return { decisions };
        } finally {
          clearInterval(beat);
        }
      });
    },

    /** Moves the watermark to what the run's pass covered; `more`: messages arrived after it. */
    async finishExtraction(input: { userId: string; conversationId: string; coveredSeq: number }): Promise<{ watermark: number; more: boolean }> {
      return asActivity(() => finishRunPass(deps, input));
    },

    /**
     * The end of a pass in one activity instead of three: the vectors of its decisions that did
     * not reach Chroma (failures stay in the outbox for the scheduled drain), the episodes of the
     * conversation (after the decisions, so a forget request of this conversation is already
     * applied), then the watermark. Each step is idempotent, so a retry repeats them whole. A
     * heartbeat every few seconds tells a crashed worker's attempt from a slow one.
     */
    async finishPass(input: { userId: string; conversationId: string; coveredSeq: number; read: boolean }): Promise<FinishPassResult> {
      return asActivity(async () => {
        const ctx = Context.current();
        const beat = setInterval(() => ctx.heartbeat({ phase: 'finishing' }), 5_000);
        try {
          const { userId, conversationId } = input;
          const execution = ctx.info.workflowExecution;
          const vectors = input.read ? await drainVectorOutbox(deps, { userId, budgetMs: PASS_DRAIN_BUDGET_MS, onPass: (passes) => ctx.heartbeat({ phase: 'vectors', passes }) }) : undefined;
          const episodes = input.read ? await writeEpisodes(deps, { userId, conversationId, workflowId: execution?.workflowId, runId: execution?.runId }) : undefined;
          const finished = await finishRunPass(deps, { userId, conversationId, coveredSeq: input.coveredSeq });
          return { ...finished, ...(vectors ? { vectors } : {}), ...(episodes ? { episodes } : {}) };
        } finally {
          clearInterval(beat);
        }
      });
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
