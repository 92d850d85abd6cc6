import { uuidFromKey } from '../shared/ids';
import { indexableLines, messageKey, pairExchange, pairLines, type MessageRef, type StoredLine } from '../core/exchange-lines';
import type { ExchangeVectorUnit } from '../core/ports/recall';
import type { MessageVectorEraser } from '../core/ports/lifecycle';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { lineEntityNames } from '../core/extraction/line-entities';
import { segmenter } from '../shared/segmentation';
import type { ServiceDeps } from '../shared/deps';
import { byUser, chunkLength, CHUNK_TOKENS, cutToModel, estimateTokens, USER_TOKENS_PER_RUN } from './exchange-index-bounds';

/** Messages read per conversation per chunk, at most: fewer when they are long (CHUNK_TOKENS). */
const BATCH_MESSAGES = 64;

/** Result of one indexing pass (ids and counts only: activity results show in Temporal UI). */
export interface ExchangeIndexResult {
  /** Conversations found with messages past their exchange watermark. */
  conversations: number;
  /** Vectors written: lines and pairs (a pair re-indexed when its reply arrived counts again). */
  exchanges: number;
  /** Conversations left for the next pass: the budget ran out, or Chroma or the embedder failed. */
  deferred: number;
  failed: number;
}

export type ExchangeIndexDeps = Pick<ServiceDeps, 'embedder' | 'exchangeIndex' | 'exchangeVectors'> & Partial<Pick<ServiceDeps, 'messageSearch'>>;

/** Deterministic vector id of the pair a message anchors: a re-run overwrites, never doubles. */
export function exchangeVectorId(userId: string, conversationId: string, anchorMessageId: string): string {
  return uuidFromKey(`exchange:${userId}:${conversationId}:${anchorMessageId}`);
}

/** Deterministic vector id of one message's line alone. */
export function lineVectorId(userId: string, conversationId: string, messageId: string): string {
  return uuidFromKey(`exchange-line:${userId}:${conversationId}:${messageId}`);
}

/** The vectors of a batch of lines: one per line, and one per pair (a user line and its reply). */
function vectorsOf(userId: string, conversationId: string, lines: readonly StoredLine[], fresh: (l: StoredLine) => boolean): { id: string; text: string; messageId: string; unit: ExchangeVectorUnit }[] {
  return [
    ...indexableLines(lines.filter(fresh)).map((x) => ({ id: lineVectorId(userId, conversationId, x.line.messageId), text: x.text, messageId: x.line.messageId, unit: 'line' as const })),
    ...pairLines(lines).map((x) => ({ id: exchangeVectorId(userId, conversationId, x.anchor.messageId), text: x.text, messageId: x.anchor.messageId, unit: 'pair' as const })),
  ];
}

/** Each line's entity names, for the graph over exchanges. */
function entityNamesOf(lines: readonly StoredLine[]): { messageId: string; at: Date; names: string[] }[] {
  return lines.map((l) => ({ messageId: l.messageId, at: l.at, names: lineEntityNames(l.content, segmenter) }));
}

/**
 * Links the lines a conversation had indexed before the graph over exchanges existed (between its
 * link watermark and its exchange watermark) to their entities, batch by batch, without embedding
 * them again. True when the links caught up with the exchange watermark; false when the time ran out.
 */
async function linkIndexedLines(
  deps: Required<Pick<ExchangeIndexDeps, 'exchangeIndex'>>,
  c: { userId: string; conversationId: string; indexedSeq: number; linkedSeq: number },
  forgotten: ReadonlySet<string>,
  until: number,
): Promise<boolean> {
  const { linkEntities, advanceLinks } = deps.exchangeIndex;
  if (!linkEntities || !advanceLinks) return true;
  const conv = { userId: c.userId, conversationId: c.conversationId };
  let after = c.linkedSeq;
  while (after < c.indexedSeq) {
    const read = await deps.exchangeIndex.linesAfter({ ...conv, afterSeq: after, limit: BATCH_MESSAGES });
    const fresh = read.filter((l) => l.seq > after && l.seq <= c.indexedSeq);
    // Nothing left below the exchange watermark (retention deleted the rest): caught up.
    const upTo = fresh.length < BATCH_MESSAGES ? c.indexedSeq : fresh[fresh.length - 1]!.seq;
    const linked = entityNamesOf(fresh.filter((l) => !forgotten.has(messageKey(l.conversationId, l.messageId))));
    if (linked.some((l) => l.names.length > 0)) await linkEntities.call(deps.exchangeIndex, { ...conv, lines: linked });
    await advanceLinks.call(deps.exchangeIndex, { ...conv, seq: upTo });
    after = upTo;
    if (after < c.indexedSeq && Date.now() > until) return false;
  }
  return true;
}

/** One chunk of one conversation: what it wrote, its new watermark, its estimated cost, and whether the conversation caught up. */
interface Chunk {
  written: number;
  after: number;
  cost: number;
  done: boolean;
}

/**
 * Indexes one chunk of a conversation's lines after its watermark: as many lines as fit in
 * `maxTokens` of estimated embedding (at least one), each text cut to what the model reads, and
 * moves the watermark once Chroma accepted them, so a run that fails later keeps this chunk. The
 * line at the watermark is read again: a user line whose pair was indexed alone is indexed once
 * more with the reply that arrived since (same id). Lines the user asked to forget are never embedded.
 */
async function indexChunk(
  deps: Required<Pick<ExchangeIndexDeps, 'embedder' | 'exchangeIndex' | 'exchangeVectors'>>,
  c: { userId: string; conversationId: string },
  after: number,
  forgotten: ReadonlySet<string>,
  maxTokens: number,
): Promise<Chunk> {
  const read = await deps.exchangeIndex.linesAfter({ userId: c.userId, conversationId: c.conversationId, afterSeq: after, limit: BATCH_MESSAGES });
  const unread = read.filter((l) => l.seq > after);
  if (unread.length === 0) return { written: 0, after, cost: 0, done: true };
  const fresh = unread.slice(0, chunkLength(unread, maxTokens));
  const upTo = fresh[fresh.length - 1]!.seq;
  // The line at the watermark counts again only when its pair may have been waiting for its reply.
  const lines = read.filter((l) => l.seq <= upTo && (l.seq > after || (l.role === 'user' && after > 0)) && !forgotten.has(messageKey(l.conversationId, l.messageId)));
  const vectors = vectorsOf(c.userId, c.conversationId, lines, (l) => l.seq > after).map((x) => ({ ...x, text: cutToModel(x.text) }));
  let cost = 0;
  if (vectors.length > 0) {
    cost = vectors.reduce((sum, x) => sum + estimateTokens(x.text), 0);
    const embeddings = await deps.embedder.embedDocuments({ texts: vectors.map((x) => x.text), lane: 'background' });
    await deps.exchangeVectors.upsert({
      userId: c.userId,
      items: vectors.map((x, i) => ({ id: x.id, embedding: embeddings[i]!, conversationId: c.conversationId, messageId: x.messageId, unit: x.unit })),
    });
  }
  // The graph over exchanges: each new line linked to the entities it names, before the
  // watermark moves, so a failed chunk is linked again with its vectors (the links are idempotent).
  if (deps.exchangeIndex.linkEntities) {
    const linked = entityNamesOf(lines.filter((l) => l.seq > after));
    if (linked.some((l) => l.names.length > 0)) await deps.exchangeIndex.linkEntities({ userId: c.userId, conversationId: c.conversationId, lines: linked });
  }
  await deps.exchangeIndex.advance({ userId: c.userId, conversationId: c.conversationId, seq: upTo });
  return { written: vectors.length, after: upTo, cost, done: fresh.length === unread.length && unread.length < BATCH_MESSAGES };
}

/** Options of one indexer run. */
export interface IndexExchangesOptions {
  /** Conversations looked at (the repository interleaves users, so each user's first comes first). */
  limit: number;
  /** Time after which no new chunk starts (the first always runs). */
  budgetMs: number;
  /** Estimated tokens one user's lines may cost this run (default {@link USER_TOKENS_PER_RUN}). */
  userTokens?: number;
  /** Called after every chunk: the activity's heartbeat. */
  onProgress?: (r: ExchangeIndexResult) => void;
}

/**
 * The exchange indexer (a Schedule tick, off the hot path): embeds the lines of conversations with
 * messages past their exchange watermark into the user's exchange collection, twice: each line on
 * its own (a hit names the line that matched, and one evidence line is not diluted by its
 * partner) and each pair (a user line and its reply, for what only the two together say).
 * Conversations stored before the index existed are backfilled the same way.
 *
 * The work is bounded so one user's backlog cannot starve the others: chunks of at most
 * CHUNK_TOKENS estimated tokens, taken round-robin, one per user with owed lines per round, and at
 * most `userTokens` per user per run; the rest is the next run's. Every chunk moves its
 * conversation's watermark and reports progress (the heartbeat), so a run cut short keeps what it
 * did. A failure (Chroma or the embedder down) leaves that conversation's watermark where its last
 * chunk put it: the next tick indexes the rest, idempotently. One conversation failing does not
 * stop the rest.
 */
export async function indexExchanges(deps: ExchangeIndexDeps, opts: IndexExchangesOptions): Promise<ExchangeIndexResult> {
  const result: ExchangeIndexResult = { conversations: 0, exchanges: 0, deferred: 0, failed: 0 };
  if (!deps.exchangeIndex || !deps.exchangeVectors) return result;
  const ready = deps as Required<Pick<ExchangeIndexDeps, 'embedder' | 'exchangeIndex' | 'exchangeVectors'>>;
  const until = Date.now() + opts.budgetMs;
  const userTokens = opts.userTokens ?? USER_TOKENS_PER_RUN;
  const owed = await ready.exchangeIndex.owed({ limit: opts.limit });
  result.conversations = owed.length;
  let lastError: unknown;
  const forgottenOf = new Map<string, Promise<Set<string>>>();
  const forgotten = (userId: string) => {
    const search = deps.messageSearch;
    if (!search) return Promise.resolve(new Set<string>());
    let found = forgottenOf.get(userId);
    if (!found) {
      found = search.forgotten({ userId }).then((refs) => new Set(refs.map((r) => messageKey(r.conversationId, r.messageId))));
      forgottenOf.set(userId, found);
    }
    return found;
  };
  // Per user: its owed conversations, the one it is at, that one's watermark once its links caught up, and what it spent.
  const users = byUser(owed).map((convs) => ({ convs, at: 0, after: undefined as number | undefined, used: 0 }));
  let active = users;
  let started = false;
  rounds: while (active.length > 0) {
    for (const u of active) {
      if (started && Date.now() > until) break rounds;
      started = true;
      const c = u.convs[u.at]!;
      try {
        const known = await forgotten(c.userId);
        if (u.after === undefined) {
          // Links first: the exchange watermark then moves both, so no line is ever skipped by them.
          if (c.linkedSeq !== undefined && c.linkedSeq < c.indexedSeq && !(await linkIndexedLines(ready, { ...c, linkedSeq: c.linkedSeq }, known, until))) break rounds;
          u.after = c.indexedSeq;
        }
        const chunk = await indexChunk(ready, c, u.after, known, Math.min(CHUNK_TOKENS, Math.max(1, userTokens - u.used)));
        result.exchanges += chunk.written;
        u.used += chunk.cost;
        u.after = chunk.after;
        if (chunk.done) {
          u.at++;
          u.after = undefined;
        }
      } catch (err) {
        result.failed++;
        lastError = err;
        u.at++;
        u.after = undefined;
      }
      opts.onProgress?.(result);
    }
    active = active.filter((u) => u.at < u.convs.length && u.used < userTokens);
  }
  result.deferred = result.failed + users.reduce((sum, u) => sum + u.convs.length - u.at, 0);
  // Nothing indexed and everything failed: report it, so the outage shows in Temporal UI.
  if (owed.length > 0 && result.failed === owed.length) {
    throw lastError instanceof MemoryServiceError ? lastError : new MemoryServiceError(ErrorCode.vectorStoreUnavailable, 'exchange vectors not written', {}, { cause: lastError });
  }
  return result;
}

/**
 * Removes the vectors holding a message the user asked to forget (the request itself and the
 * sources of what it expired): its own line's, and its pair's. Search already hides such lines when
 * it hydrates; this takes their text's embedding out of Chroma too, and the indexer never embeds
 * them again. Idempotent: removing an absent id is a no-op.
 */
export async function forgetExchangeVectors(deps: Pick<ServiceDeps, 'messageSearch' | 'exchangeVectors'>, userId: string, forgotten: readonly MessageRef[], now: Date): Promise<number> {
  if (!deps.exchangeVectors || forgotten.length === 0) return 0;
  const around = await deps.messageSearch.withNeighbours({ userId, refs: forgotten, staleSources: false, now });
  const pairs = around.map((n) => pairExchange(n.anchor, n.previous, n.next)).map((x) => exchangeVectorId(userId, x.conversationId, x.messageIds[0]!));
  const lines = forgotten.map((m) => lineVectorId(userId, m.conversationId, m.messageId));
  const ids = [...new Set([...lines, ...pairs])];
  await deps.exchangeVectors.remove({ userId, ids });
  return ids.length;
}

/**
 * Removes the vectors of erased messages (a hard erase deleted their rows): each one's line vector
 * and the pair vector it anchored. A pair it was the reply of is anchored on a line that stays;
 * the erasure resets those conversations' watermarks, so the indexer rewrites such pairs from the
 * lines that remain. Idempotent.
 */
export async function eraseExchangeVectors(deps: Pick<ServiceDeps, 'exchangeVectors'>, userId: string, erased: readonly MessageRef[]): Promise<number> {
  if (!deps.exchangeVectors || erased.length === 0) return 0;
  const ids = [...new Set(erased.flatMap((m) => [lineVectorId(userId, m.conversationId, m.messageId), exchangeVectorId(userId, m.conversationId, m.messageId)]))];
  await deps.exchangeVectors.remove({ userId, ids });
  return ids.length;
}

/** The lifecycle sweep's {@link MessageVectorEraser}: the exchange vectors of the messages retention deletes. */
export function exchangeVectorEraser(deps: Pick<ServiceDeps, 'exchangeVectors'>): MessageVectorEraser {
  return { eraseMessageVectors: ({ userId, messages }) => eraseExchangeVectors(deps, userId, messages) };
}
