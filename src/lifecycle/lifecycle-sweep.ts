import { ErrorCode, MemoryServiceError } from '../core/errors';
import { importanceFor } from '../core/lifecycle/memory-importance';
import type { LifecycleAudit, VectorDeletion } from '../core/ports/lifecycle';
import type { RetentionKey } from '../core/ports/privacy';
import type { MemoryTransaction } from '../core/ports/transaction';
import {
  addSweepCounts,
  appendCapped,
  emptySweepCounts,
  MAX_LISTED_TRANSITIONS,
  type LifecycleStepResult,
  type LifecycleTransition,
  type SweepCounts,
} from '../core/lifecycle/sweep';
import {
  addRetentionCounts,
  emptyRetentionCounts,
  RETENTION_KINDS,
  retentionCutoff,
  type RetentionCounts,
  type RetentionKind,
  type RetentionStepResult,
} from '../core/lifecycle/retention';
import type { MessageRef } from '../core/exchange-lines';
import type { ServiceDeps } from '../shared/deps';

export type { LifecycleStepResult, RetentionStepResult };

/**
 * The lifecycle jobs as loops of set-based pages. Each step runs pages until its work is done or
 * its time budget is spent, reporting progress after every committed page (the activity turns
 * that into a heartbeat), and returns a cursor to resume from. Every page is its own
 * transaction and idempotent, so a step retried after a crash redoes nothing.
 */

/** Common input of a step. */
export interface LifecycleStepInput {
  now: Date;
  cursor: string | null;
  /** Memories per page (users per page for the capacity step). */
  limit: number;
  /** Stop starting new pages after this long; the caller resumes from the cursor. */
  budgetMs: number;
  audit: LifecycleAudit;
  /** Called after each committed page with the progress so far. */
  onPage?: (progress: LifecycleStepResult) => void;
}

function fresh(cursor: string | null): LifecycleStepResult {
  return { cursor, done: false, counts: emptySweepCounts(), transitions: [], truncated: false };
}

function record(state: LifecycleStepResult, counts: Partial<SweepCounts>, transitions: LifecycleTransition[]): void {
  state.counts = addSweepCounts(state.counts, counts);
  const capped = appendCapped(state.transitions, transitions, MAX_LISTED_TRANSITIONS);
  state.transitions = capped.list;
  state.truncated ||= capped.truncated;
}

async function loop(input: Pick<LifecycleStepInput, 'budgetMs' | 'onPage'>, state: LifecycleStepResult, page: () => Promise<void>): Promise<LifecycleStepResult> {
  const started = Date.now();
  do {
    await page();
    input.onPage?.(state);
  } while (!state.done && Date.now() - started < input.budgetMs);
  return state;
}

const count = (transitions: LifecycleTransition[], action: LifecycleTransition['action']) => transitions.filter((t) => t.action === action).length;

/** Decay pass over all users' active memories: refresh decay, expire the stale, archive the faded. */
export async function sweepDecay(deps: Pick<ServiceDeps, 'unitOfWork'>, input: LifecycleStepInput): Promise<LifecycleStepResult> {
  const state = fresh(input.cursor);
  return loop(input, state, async () => {
    const page = await deps.unitOfWork.run({
      work: (tx) => tx.lifecycle.sweepDecayPage({ now: input.now, afterId: state.cursor, limit: input.limit, audit: input.audit }),
    });
    record(state, { scanned: page.scanned, updated: page.updated, archived: count(page.transitions, 'archive'), expired: count(page.transitions, 'expire') }, page.transitions);
    if (page.lastId === null || page.scanned < input.limit) state.done = true;
    else state.cursor = page.lastId;
  });
}

/** Expires archived memories whose lifetime ended (no cursor: each page takes what is due). */
export async function expireArchived(deps: Pick<ServiceDeps, 'unitOfWork'>, input: LifecycleStepInput): Promise<LifecycleStepResult> {
  const state = fresh(null);
  return loop(input, state, async () => {
    const moved = await deps.unitOfWork.run({ work: (tx) => tx.lifecycle.expireArchivedPage({ now: input.now, limit: input.limit, audit: input.audit }) });
    record(state, { expired: moved.length, updated: moved.length }, moved);
    if (moved.length < input.limit) state.done = true;
  });
}

/** Users handled per transaction by the capacity step: bounded work per lock set. */
const CAPACITY_USERS_PER_TRANSACTION = 20;

/** Archives each over-capacity user's least important memories beyond `cap`. Cursor: user id. */
export async function enforceCapacity(deps: Pick<ServiceDeps, 'unitOfWork'>, input: LifecycleStepInput & { cap: number }): Promise<LifecycleStepResult> {
  const state = fresh(input.cursor);
  return loop(input, state, async () => {
    const users = await deps.unitOfWork.run({ work: (tx) => tx.lifecycle.usersOverCapacity({ cap: input.cap, afterUserId: state.cursor, limit: input.limit }) });
    for (let i = 0; i < users.length; i += CAPACITY_USERS_PER_TRANSACTION) {
      const chunk = users.slice(i, i + CAPACITY_USERS_PER_TRANSACTION);
      const moved = await deps.unitOfWork.run({ work: (tx) => tx.lifecycle.archiveOverCapacity({ userIds: chunk, cap: input.cap, now: input.now, audit: input.audit }) });
      record(state, { capacityArchived: moved.length, updated: moved.length }, moved);
    }
    if (users.length < input.limit) state.done = true;
    else state.cursor = users[users.length - 1]!;
  });
}

/** Chroma ids per delete request. */
const VECTOR_DELETE_CHUNK = 2000;

/**
 * Drains pending vector deletions in bulk (deletes need no embeddings). Cursor: memory id. Each
 * page holds its outbox rows locked while Chroma deletes them. On a Chroma failure the confirmed
 * chunks stay cleared, the rest records the attempt and stays in the outbox (for the retry or any
 * later sync), and a retryable error is thrown.
 */
export async function drainVectorDeletes(deps: Pick<ServiceDeps, 'unitOfWork' | 'vectors'>, input: Omit<LifecycleStepInput, 'now' | 'audit'>): Promise<LifecycleStepResult> {
  const state = fresh(input.cursor);
  return loop(input, state, async () => {
    let failed: { entries: VectorDeletion[]; err: unknown } | undefined;
    const page = await deps.unitOfWork.run({
      work: async (tx) => {
        const pending = await tx.lifecycle.lockVectorDeletes({ afterId: state.cursor, limit: input.limit });
        let removed = 0;
        for (let i = 0; i < pending.length; i += VECTOR_DELETE_CHUNK) {
          const chunk = pending.slice(i, i + VECTOR_DELETE_CHUNK);
          try {
            await deps.vectors.removeMany({ items: chunk.map((e) => ({ userId: e.userId, id: e.memoryId })) });
          } catch (err) {
            failed = { entries: pending.slice(i), err };
            break;
          }
          removed += await tx.lifecycle.clearVectorDeletes({ entries: chunk });
        }
        return { pending, removed };
      },
    });
    if (failed) {
      const { entries } = failed;
      const error = failed.err instanceof Error ? failed.err.message : String(failed.err);
      await deps.unitOfWork.run({ work: (tx) => tx.lifecycle.failVectorDeletes({ entries, error }) });
      throw new MemoryServiceError(ErrorCode.vectorStoreUnavailable, `${failed.entries.length} vector deletions left pending`, {}, { cause: failed.err });
    }
    record(state, { vectorsRemoved: page.removed }, []);
    if (page.pending.length < input.limit) state.done = true;
    else state.cursor = page.pending[page.pending.length - 1]!.memoryId;
  });
}

/** Audit reason of the weekly reinforcement. */
export const AUTO_REINFORCE_REASON = 'weekly reinforcement of high-importance memories: last access refreshed, decay reset';

/**
 * Weekly reinforcement (seed M.2.3 auto_reinforce): every high/critical active memory not
 * accessed since `now` gets last access = now (decay back to 1) and a recomputed importance,
 * never lower than before. Cursor: memory id. Re-running at the same `now` changes nothing.
 */
export async function reinforceImportant(deps: Pick<ServiceDeps, 'unitOfWork'>, input: LifecycleStepInput): Promise<LifecycleStepResult> {
  const state = fresh(input.cursor);
  return loop(input, state, async () => {
    const { rows, moved } = await deps.unitOfWork.run({
      work: async (tx) => {
        const page = await tx.lifecycle.lockReinforcementPage({ now: input.now, afterId: state.cursor, limit: input.limit });
        const updates = page.map((m) => {
          const imp = importanceFor({ text: m.text, frequencyCount: m.frequencyCount, lastAccessedAt: input.now, now: input.now, associatedTopics: m.associatedTopics, prior: m.importance });
          return { id: m.id, importance: imp.score, importanceLevel: imp.level, components: imp.components };
        });
        return { rows: page, moved: await tx.lifecycle.applyReinforcement({ now: input.now, updates, audit: input.audit, reason: AUTO_REINFORCE_REASON }) };
      },
    });
    record(state, { scanned: rows.length, updated: moved.length }, moved);
    if (rows.length < input.limit) state.done = true;
    else state.cursor = rows[rows.length - 1]!.id;
  });
}

/** Input of the retention step (times fixed by the sweep; ages come from RETENTION_*_DAYS). */
export interface RetentionStepInput {
  now: Date;
  /** Where a previous call stopped (kind and keyset position), null at the start. */
  cursor: string | null;
  /** Rows per page (one transaction each). */
  limit: number;
  budgetMs: number;
  onPage?: (progress: RetentionStepResult) => void;
}

interface RetentionCursor {
  kind: RetentionKind;
  after: RetentionKey | null;
}

/**
 * Retention, so raw conversations and what is derived from them are not kept for ever: deletes
 * messages, episodes, notifications and digests older than their
 * configured age, kind after kind, across all users, in keyset pages (one transaction each):
 * messages with their BM25 postings (statistics follow through the trigger) and exchange vectors,
 * episodes with their
 * postings, statistics and Chroma vectors (deleted while the rows are locked, before the rows go:
 * a Chroma failure rolls the page back and the step is retried), and conversations left empty.
 * Idempotent: a repeated page finds nothing. Cursor: JSON of the kind and the last key.
 */
export async function sweepRetention(
  deps: Pick<ServiceDeps, 'unitOfWork' | 'episodeVectors' | 'messageVectorEraser' | 'config'>,
  input: RetentionStepInput,
): Promise<RetentionStepResult> {
  const kinds = RETENTION_KINDS.filter((k) => deps.config.retention[k] !== null);
  const state: RetentionStepResult = { cursor: input.cursor, done: false, counts: emptyRetentionCounts() };
  let at: RetentionCursor | null = input.cursor ? (JSON.parse(input.cursor) as RetentionCursor) : kinds[0] ? { kind: kinds[0], after: null } : null;
  const started = Date.now();
  while (at && !state.done) {
    const cutoff = retentionCutoff(input.now, deps.config.retention[at.kind])!;
    const { kind, after } = at;
    const page = await deps.unitOfWork.run({ work: (tx) => retentionPage(tx, deps, kind, { cutoff, after, limit: input.limit }) });
    state.counts = addRetentionCounts(state.counts, page.counts);
    if (page.scanned < input.limit || !page.last) {
      const next = kinds[kinds.indexOf(at.kind) + 1];
      at = next ? { kind: next, after: null } : null;
    } else {
      at = { kind: at.kind, after: page.last };
    }
    state.cursor = at ? JSON.stringify(at) : null;
    state.done = at === null;
    input.onPage?.(state);
    if (Date.now() - started >= input.budgetMs) break;
  }
  state.done = at === null;
  return state;
}

async function retentionPage(
  tx: Pick<MemoryTransaction, 'retention'>,
  deps: Pick<ServiceDeps, 'episodeVectors' | 'messageVectorEraser'>,
  kind: RetentionKind,
  page: { cutoff: Date; after: RetentionKey | null; limit: number },
): Promise<{ scanned: number; last: RetentionKey | null; counts: Partial<RetentionCounts> }> {
  switch (kind) {
    case 'messages': {
      const r = await tx.retention.messagesPage(page);
      // Inside the page's transaction: a Chroma failure rolls the deletion back and the step is
      // retried, so no message goes while its embedding stays.
      const byUser = new Map<string, MessageRef[]>();
      for (const m of r.messages) byUser.set(m.userId, [...(byUser.get(m.userId) ?? []), { conversationId: m.conversationId, messageId: m.messageId }]);
      let exchangeVectorsRemoved = 0;
      for (const [userId, messages] of byUser) exchangeVectorsRemoved += await deps.messageVectorEraser.eraseMessageVectors({ userId, messages });
      const conversations = await tx.retention.dropEmptyConversations({ conversations: r.conversations, cutoff: page.cutoff });
      return { scanned: r.scanned, last: r.last, counts: { messages: r.deleted, messagePostings: r.postings, exchangeVectorsRemoved, conversations } };
    }
    case 'episodes': {
      const due = await tx.retention.lockEpisodes(page);
      let vectors = 0;
      if (deps.episodeVectors) {
        const byUser = new Map<string, string[]>();
        for (const e of due) byUser.set(e.userId, [...(byUser.get(e.userId) ?? []), e.id]);
        for (const [userId, ids] of byUser) {
          await deps.episodeVectors.remove({ userId, ids });
          vectors += ids.length;
        }
      }
      const deleted = await tx.retention.deleteEpisodes({ ids: due.map((e) => e.id) });
      const conversations = await tx.retention.dropEmptyConversations({
        conversations: [...new Map(due.map((e) => [`${e.userId}\u0000${e.conversationId}`, { userId: e.userId, conversationId: e.conversationId }])).values()],
        cutoff: page.cutoff,
      });
      const lastRow = due[due.length - 1];
      return { scanned: due.length, last: lastRow ? [lastRow.endedAt, lastRow.id] : null, counts: { episodes: deleted, episodeVectorsRemoved: vectors, conversations } };
    }
    case 'notifications': {
      const r = await tx.retention.notificationsPage(page);
      return { scanned: r.scanned, last: r.last, counts: { notifications: r.deleted } };
    }
    case 'digests': {
      const r = await tx.retention.digestsPage(page);
      return { scanned: r.scanned, last: r.last, counts: { digests: r.deleted } };
    }
  }
}
