import { episodeId } from '../shared/ids';
import { segmenter as jiebaSegmenter } from '../shared/segmentation';
import { buildEpisodes } from '../core/episodes/summarize';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { ConversationMessage } from '../core/types';
import { allConversationMessages } from './conversation-messages';
import type { ServiceDeps } from '../shared/deps';
import { forgetExchangeVectors } from './exchange-index';
import { userTimeZone } from '../account/settings';

/** Result of {@link writeEpisodes}: ids and counts only (activity results show in Temporal UI). */
export interface WriteEpisodesResult {
  episodes: { id: string; day: string }[];
  written: number;
  unchanged: number;
  removed: number;
  /** Other conversations whose episodes were rebuilt because the user asked to forget part of them. */
  rebuiltConversations: string[];
  vectors: { upserted: number; removed: number };
}

async function allMessages(deps: Pick<ServiceDeps, 'conversations'>, userId: string, conversationId: string): Promise<ConversationMessage[]> {
  const messages = await allConversationMessages(deps, { userId, conversationId });
  return messages.map((m) => ({ id: m.id, role: m.role, content: m.content, at: m.at }));
}

/** What writing a conversation's episodes reads and writes: its messages, the user's zone, the episode and message stores, their vectors. */
export type EpisodeWriterDeps = Pick<ServiceDeps, 'conversations' | 'settings' | 'embedder' | 'episodeVectors' | 'exchangeVectors' | 'messageSearch' | 'episodes'>;

/**
 * Writes the episodes of one conversation (one per local day in the user's zone): extractive
 * summary, BM25 postings and a vector in the episode collection. Idempotent: ids are derived from
 * (user, conversation, day) and an unchanged episode is not rewritten, so a retried activity or a
 * re-run workflow changes nothing. Messages the user asked to forget are left out, and earlier
 * episodes whose summary quoted them are rebuilt too.
 */
export async function writeEpisodes(
  deps: EpisodeWriterDeps,
  input: { userId: string; conversationId: string; workflowId?: string; runId?: string },
): Promise<WriteEpisodesResult> {
  const { userId } = input;
  const timeZone = await userTimeZone(deps, userId);
  const forgotten = await deps.messageSearch.forgotten({ userId });
  const stale = await deps.episodes.summarisingAny({ userId, messageIds: forgotten.map((f) => f.messageId) });
  const others = [...new Set(stale.map((s) => s.conversationId).filter((c) => c !== input.conversationId))].sort();

  const result: WriteEpisodesResult = { episodes: [], written: 0, unchanged: 0, removed: 0, rebuiltConversations: others, vectors: { upserted: 0, removed: 0 } };
  const removedIds: string[] = [];
  for (const conversationId of [input.conversationId, ...others]) {
    const messages = await allMessages(deps, userId, conversationId);
    const hidden = new Set(forgotten.filter((f) => f.conversationId === conversationId).map((f) => f.messageId));
    const drafts = buildEpisodes(messages, { timeZone, hidden, segmenter: jiebaSegmenter });
    const write = await deps.episodes.replaceForConversation({ userId, conversationId, timeZone, drafts, workflowId: input.workflowId, runId: input.runId });
    result.written += write.written.length;
    result.unchanged += write.unchanged.length;
    result.removed += write.removed.length;
    removedIds.push(...write.removed);
    if (conversationId === input.conversationId) result.episodes = drafts.map((d) => ({ id: episodeId(userId, conversationId, d.day), day: d.day }));
  }
  result.vectors = await syncEpisodeVectors(deps, userId, removedIds);
  // What the user asked to forget leaves the exchange index too (search already hides it).
  await forgetExchangeVectors(deps, userId, forgotten, new Date());
  return result;
}

/**
 * Brings the episode collection in line with PostgreSQL for one user: writes the vectors that are
 * missing or stale and removes those of deleted (or emptied) episodes. A failure is rethrown as
 * retryable and the retry writes what is still owed. A vector left behind by a failed removal is
 * harmless: search hits are hydrated from PostgreSQL, where the episode no longer exists.
 */
export async function syncEpisodeVectors(
  deps: Pick<ServiceDeps, 'embedder' | 'episodeVectors' | 'messageSearch' | 'episodes'>,
  userId: string,
  removedIds: string[] = [],
  limit = 200,
): Promise<{ upserted: number; removed: number }> {
  const index = deps.episodeVectors;
  if (!index) return { upserted: 0, removed: 0 };
  try {
    const owed = await deps.episodes.vectorsOwed({ userId, limit });
    const empty = owed.filter((e) => e.summary.trim() === '');
    const full = owed.filter((e) => e.summary.trim() !== '');
    const toRemove = [...removedIds, ...empty.map((e) => e.id)];
    if (toRemove.length > 0) await index.remove({ userId, ids: toRemove });
    if (full.length > 0) {
      const embeddings = await deps.embedder.embedDocuments({ texts: full.map((e) => e.summary), lane: 'background' });
      await index.upsert({ userId, items: full.map((e, i) => ({ id: e.id, embedding: embeddings[i]!, conversationId: e.conversationId, day: e.day })) });
    }
    for (const e of owed) await deps.episodes.markVectorWritten({ userId, id: e.id, contentHash: e.contentHash });
    return { upserted: full.length, removed: toRemove.length };
  } catch (err) {
    if (err instanceof MemoryServiceError) throw err;
    throw new MemoryServiceError(ErrorCode.vectorStoreUnavailable, 'episode vectors not written', { userId }, { cause: err });
  }
}
