import { log, patched, proxyActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { createEpisodeActivities } from '../../activities/conversation/episodes';
import type { createExtractionActivities } from '../../activities/conversation/extraction';
import type { createExtractionRunActivities } from '../../activities/conversation/extraction-runs';
import type { AppliedDecision } from '../../src/core/dto';
import { startReminderChild } from '../proactive/reminder-child';
import { MemoryDecisionsKey } from '../shared/search-attributes';
import type { ExtractionResult, ExtractMemoriesInput } from '../shared/types';

type Activities = ReturnType<typeof createExtractionActivities> & ReturnType<typeof createExtractionRunActivities> & ReturnType<typeof createEpisodeActivities>;

const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 20 };
// Short timeouts: a decision is one transaction, so a crashed worker's attempt is retried quickly.
const acts = proxyActivities<Activities>({ startToCloseTimeout: '15s', retry });
// Extraction may call an LLM; its own retries with the validation error happen inside the activity.
const extractor = proxyActivities<Activities>({ startToCloseTimeout: '5m', heartbeatTimeout: '20s', retry });

const PAGE = 200;
/** Passes of one run over messages that kept arriving; what comes after is left to the next run. */
const MAX_PASSES = 5;
/** Runs started before watermarks re-read the whole conversation; their histories replay unchanged. */
export const WATERMARK_PATCH = 'extraction-watermark';
/** Runs started before it decide one candidate per activity; they finish that way. */
export const PAGE_DECISIONS_PATCH = 'extraction-decisions-per-page';
/** Runs started before it end a pass with three activities (vectors, episodes, watermark); they finish that way. */
export const ONE_FINISH_PATCH = 'extraction-one-finish-per-pass';
/** Temporal UI's one-line summary of a page's decisions; the result lists each one with its key. */
const SUMMARY_CHARS = 400;

/**
 * ExtractMemories: reads the conversation page by page, extracts candidates, and takes one
 * audited decision per candidate (in message order, so "I'm allergic" then "I'm not any more" in
 * one conversation ends superseded). Decisions are keyed per candidate: re-running the workflow or
 * retrying an activity never applies a decision twice.
 */
export async function extractMemoriesWorkflow(input: ExtractMemoriesInput): Promise<ExtractionResult> {
  if (patched(WATERMARK_PATCH)) return extractAfterWatermark(input);
  const decisions: AppliedDecision[] = [];
  let afterSeq = 0;
  let messagesProcessed = 0;
  for (;;) {
    const page = await extractor.extractCandidates({ ...input, afterSeq, limit: PAGE });
    messagesProcessed += page.messageCount;
    for (const item of page.candidates) {
      const decision = await acts.decideAndApply.executeWithOptions(
        { startToCloseTimeout: '15s', retry, summary: `decide ${item.candidate.type} from ${item.candidate.messageIds.join(',')}` },
        [{ userId: input.userId, conversationId: input.conversationId, candidate: item.candidate, key: item.key }],
      );
      decisions.push(decision);
    }
    // A reminder asked for in conversation ("提醒我…") is honoured like one set through the API:
    // one ReminderWorkflow each, idempotent (deterministic id + REJECT_DUPLICATE), and it outlives
    // this workflow (ABANDON).
    for (const request of page.reminders ?? []) await startReminderChild(request);
    if (page.nextSeq === null) break;
    afterSeq = page.nextSeq;
  }
  const actions = [...new Set(decisions.map((d) => d.action))].sort();
  if (actions.length > 0) upsertSearchAttributes([{ key: MemoryDecisionsKey, value: actions }]);
  await acts.reconcileVectors({ userId: input.userId });
  // Episodes keep what was talked about that extraction did not keep: one per conversation-day,
  // after the decisions so a forget request of this conversation is already applied. Idempotent
  // (deterministic ids, upsert).
  if (patched('write-episodes')) {
    await acts.writeEpisodes.executeWithOptions(
      { startToCloseTimeout: '2m', retry, summary: `episodes of conversation ${input.conversationId}` },
      [{ userId: input.userId, conversationId: input.conversationId }],
    );
  }
  await acts.markConversationExtracted({ userId: input.userId, conversationId: input.conversationId, workflowId: workflowInfo().workflowId });

  const counts = { ignore: 0, create: 0, reinforce: 0, update: 0, supersede: 0, forget: 0 } as ExtractionResult['counts'];
  for (const d of decisions) counts[d.action]++;
  log.info('extraction finished', { counts, messagesProcessed });
  return { userId: input.userId, conversationId: input.conversationId, messagesProcessed, decisions, counts };
}

/**
 * The incremental run, so a re-run never reads or decides a message twice: only messages after the conversation's watermark are read.
 * Each page's extractor output is stored and keyed by source messages, type and subject, so a
 * retry or a re-run decides the same statements under the same keys. The watermark moves in the
 * transaction of the last decision of every page but a pass's last one; the last page's share
 * moves with `finishPass` (`finishExtraction` in runs older than ONE_FINISH_PATCH), after the episodes, so a run that dies before them is re-run by
 * the reconciler. Messages that arrive while the run goes on get another pass (up to
 * MAX_PASSES); later ones, a run of their own (the conversation workflow's follow-up, or the
 * reconciler).
 */
async function extractAfterWatermark(input: ExtractMemoriesInput): Promise<ExtractionResult> {
  const { userId, conversationId } = input;
  const decisions: AppliedDecision[] = [];
  let messagesProcessed = 0;
  let watermark = 0;
  let passes = 0;
  // Asked once, at the start: a run keeps the shape it started with, so a run that began
  // deciding per candidate (before this change) replays and continues unchanged.
  const perPage = patched(PAGE_DECISIONS_PATCH);
  const oneFinish = patched(ONE_FINISH_PATCH);
  for (;;) {
    passes++;
    let afterSeq: number | undefined; // the first page starts at the watermark
    let covered = 0;
    let read = 0;
    for (;;) {
      const page = await extractor.extractPage({ userId, conversationId, ...(afterSeq === undefined ? {} : { afterSeq }), limit: PAGE });
      read += page.messageCount;
      covered = page.coveredSeq;
      // Reminder requests first: once the watermark passes a page, nothing reads it again.
      for (const request of page.reminders) await startReminderChild(request);
      if (perPage) {
        if (page.candidates.length > 0) {
          // A long page takes long, so a crashed worker is noticed by the missing heartbeats instead.
          const decided = await acts.decideCandidates.executeWithOptions({ startToCloseTimeout: '10m', heartbeatTimeout: '15s', retry, summary: pageSummary(page.candidates) }, [
            { userId, conversationId, candidates: page.candidates, ...(page.nextSeq !== null ? { watermark: page.lastSeq! } : {}) },
          ]);
          // The keys stay in the activity's result; the run's result keeps its shape.
          for (const { key: _key, ...decision } of decided.decisions) decisions.push(decision);
        }
      } else {
        for (const [i, item] of page.candidates.entries()) {
          const moveWatermark = page.nextSeq !== null && i === page.candidates.length - 1;
          const decision = await acts.decideCandidate.executeWithOptions(
            { startToCloseTimeout: '15s', retry, summary: `decide ${item.candidate.type} from ${item.candidate.messageIds.join(',')}` },
            [{ userId, conversationId, candidate: item.candidate, key: item.key, ...(moveWatermark ? { watermark: page.lastSeq! } : {}) }],
          );
          decisions.push(decision);
        }
      }
      if (page.nextSeq === null) break;
      afterSeq = page.nextSeq;
    }
    messagesProcessed += read;
    const finished = oneFinish
      ? // Up to 20 s of vectors, then the episodes, heartbeating every 5 s.
        await acts.finishPass.executeWithOptions({ startToCloseTimeout: '3m', heartbeatTimeout: '20s', retry, summary: `vectors, episodes and watermark of conversation ${conversationId}` }, [
          { userId, conversationId, coveredSeq: covered, read: read > 0 },
        ])
      : await finishInThreeSteps(userId, conversationId, covered, read);
    watermark = finished.watermark;
    if (!finished.more || passes >= MAX_PASSES) break;
  }
  const actions = [...new Set(decisions.map((d) => d.action))].sort();
  if (actions.length > 0) upsertSearchAttributes([{ key: MemoryDecisionsKey, value: actions }]);

  const counts = { ignore: 0, create: 0, reinforce: 0, update: 0, supersede: 0, forget: 0 } as ExtractionResult['counts'];
  for (const d of decisions) counts[d.action]++;
  log.info('extraction finished', { counts, messagesProcessed, watermark, passes });
  return { userId, conversationId, messagesProcessed, decisions, counts, watermark, passes };
}

/** A pass's end as runs started before ONE_FINISH_PATCH take it: three activities. */
async function finishInThreeSteps(userId: string, conversationId: string, covered: number, read: number): Promise<{ watermark: number; more: boolean }> {
  if (read > 0) {
    // Vectors of this run's decisions that did not reach Chroma yet; failures stay in the
    // outbox for the scheduled drain (backoff, dead letters) instead of failing the run.
    await acts.drainVectorOutbox.executeWithOptions({ startToCloseTimeout: '1m', retry, summary: 'vectors of this run' }, [{ userId, budgetMs: 20_000 }]);
    // Episodes (what was said when) for the episodic recall routes; idempotent (deterministic ids, upsert).
    await acts.writeEpisodes.executeWithOptions({ startToCloseTimeout: '2m', retry, summary: `episodes of conversation ${conversationId}` }, [{ userId, conversationId }]);
  }
  return acts.finishExtraction({ userId, conversationId, coveredSeq: covered });
}

/** "decide 3: fact from c1-m1; goal from c1-m3; …", cut to what a summary line holds. */
function pageSummary(candidates: { candidate: { type: string; messageIds: string[] } }[]): string {
  const text = `decide ${candidates.length}: ${candidates.map((c) => `${c.candidate.type} from ${c.candidate.messageIds.join(',')}`).join('; ')}`;
  return text.length <= SUMMARY_CHARS ? text : `${text.slice(0, SUMMARY_CHARS - 1)}…`;
}
