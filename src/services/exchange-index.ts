import { uuidFromKey } from '../adapters/ids';
import { pairExchange, pairLines, type MessageRef } from '../core/recall/exchanges';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { ServiceDeps } from './deps';

/** Messages read per conversation per batch: one embedding call of at most half as many exchanges. */
const BATCH_MESSAGES = 64;

/** Result of one indexing pass (ids and counts only: activity results show in Temporal UI). */
export interface ExchangeIndexResult {
  /** Conversations found with messages past their exchange watermark. */
  conversations: number;
  /** Exchange vectors written (an exchange re-indexed when its reply arrived counts again). */
  exchanges: number;
  /** Conversations left for the next pass: the budget ran out, or Chroma or the embedder failed. */
  deferred: number;
  failed: number;
}

export type ExchangeIndexDeps = Pick<ServiceDeps, 'embeddings' | 'exchangeIndex' | 'exchangeVectors'>;

/** Deterministic vector id of the exchange a message anchors: a re-run overwrites, never doubles. */
export function exchangeVectorId(userId: string, conversationId: string, anchorMessageId: string): string {
  return uuidFromKey(`exchange:${userId}:${conversationId}:${anchorMessageId}`);
}

/**
 * Indexes one conversation's exchanges from its watermark on, batch by batch, moving the watermark
 * only after Chroma accepted each batch. The line at the watermark is read again: a user line that
 * was indexed alone is indexed once more with the reply that arrived since (same id).
 */
async function indexConversation(deps: Required<ExchangeIndexDeps>, c: { userId: string; conversationId: string; indexedSeq: number }, until: number): Promise<number> {
  let written = 0;
  let after = c.indexedSeq;
  for (;;) {
    const read = await deps.exchangeIndex.linesAfter({ userId: c.userId, conversationId: c.conversationId, afterSeq: after, limit: BATCH_MESSAGES });
    // The line at the watermark counts again only when it may have been waiting for its reply.
    const lines = read.filter((l) => l.seq > after || (l.role === 'user' && after > 0));
    const fresh = read.filter((l) => l.seq > after);
    if (fresh.length === 0) return written;
    const exchanges = pairLines(lines);
    if (exchanges.length > 0) {
      const embeddings = await deps.embeddings.embedDocuments(exchanges.map((x) => x.text));
      await deps.exchangeVectors.upsert({
        userId: c.userId,
        items: exchanges.map((x, i) => ({
          id: exchangeVectorId(c.userId, c.conversationId, x.anchor.messageId),
          embedding: embeddings[i]!,
          conversationId: c.conversationId,
          messageId: x.anchor.messageId,
        })),
      });
      written += exchanges.length;
    }
    after = fresh[fresh.length - 1]!.seq;
    await deps.exchangeIndex.advance({ userId: c.userId, conversationId: c.conversationId, seq: after });
    if (fresh.length < BATCH_MESSAGES || Date.now() > until) return written;
  }
}

/**
 * The exchange indexer (a Schedule tick, off the hot path): embeds every exchange (a user line and
 * its reply) of conversations with messages past their exchange watermark into the user's exchange
 * collection, backfilling conversations stored before the index existed the same way. A failure
 * (Chroma or the embedder down) leaves that conversation's watermark where it was: the next tick
 * indexes it again, idempotently. Conversations are independent: one failing does not stop the rest.
 */
export async function indexExchanges(deps: ExchangeIndexDeps, opts: { limit: number; budgetMs: number; onProgress?: (r: ExchangeIndexResult) => void }): Promise<ExchangeIndexResult> {
  const result: ExchangeIndexResult = { conversations: 0, exchanges: 0, deferred: 0, failed: 0 };
  if (!deps.exchangeIndex || !deps.exchangeVectors) return result;
  const ready = deps as Required<ExchangeIndexDeps>;
  const until = Date.now() + opts.budgetMs;
  const owed = await ready.exchangeIndex.owed({ limit: opts.limit });
  result.conversations = owed.length;
  let lastError: unknown;
  for (const c of owed) {
    if (Date.now() > until) {
      result.deferred++;
      continue;
    }
    try {
      result.exchanges += await indexConversation(ready, c, until);
    } catch (err) {
      result.failed++;
      result.deferred++;
      lastError = err;
    }
    opts.onProgress?.(result);
  }
  // Nothing indexed and everything failed: report it, so the outage shows in Temporal UI.
  if (owed.length > 0 && result.failed === owed.length) {
    throw lastError instanceof MemoryServiceError ? lastError : new MemoryServiceError(ErrorCode.vectorStoreUnavailable, 'exchange vectors not written', {}, { cause: lastError });
  }
  return result;
}

/**
 * Removes the vectors of every exchange holding a message the user asked to forget (the request
 * itself and the sources of what it expired). Search already hides such lines when it hydrates;
 * this takes their text's embedding out of Chroma too. Idempotent: removing an absent id is a no-op.
 */
export async function forgetExchangeVectors(deps: Pick<ServiceDeps, 'messageSearch' | 'exchangeVectors'>, userId: string, forgotten: readonly MessageRef[], now: Date): Promise<number> {
  if (!deps.exchangeVectors || forgotten.length === 0) return 0;
  const around = await deps.messageSearch.withNeighbours({ userId, refs: forgotten, staleSources: false, now });
  const ids = [...new Set(around.map((n) => pairExchange(n.anchor, n.previous, n.next)).map((x) => exchangeVectorId(userId, x.conversationId, x.messageIds[0]!)))];
  await deps.exchangeVectors.remove({ userId, ids });
  return ids.length;
}
