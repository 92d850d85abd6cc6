import { sanitizeQuery } from '../core/recall/sanitize-query';
import { tokenizeForIndex } from '../shared/segmentation';
import { parseQueryDates } from '../core/time/query-dates';
import { searchExchanges, type ExchangeRoute } from './exchange-search';
import type { ServiceDeps } from '../shared/deps';
import { resolveTimeZone } from './episodic-recall';
import { foldRouteFailures, type FoldedRouteError } from './route-runner';

/** One line of a found exchange. */
export interface FoundLine {
  id: string;
  text: string;
  at: string;
}

/** An exchange found by conversation search: the user's line and the assistant's reply. */
export interface FoundExchange {
  conversationId: string;
  /** ISO time of the exchange (the user line's). */
  date: string;
  messageIds: string[];
  user?: FoundLine;
  assistant?: FoundLine;
  score: number;
  routes: string[];
  /** Said inside a date range the query named. */
  inRange: boolean;
}

export interface ConversationSearchResult {
  exchanges: FoundExchange[];
  /** Date ranges read from the query, in `timeZone`. */
  dateRanges: { text: string; start: string; end: string }[];
  timeZone: string;
  routes: { route: ExchangeRoute; ok: boolean; ms: number; hits: number }[];
  error?: FoldedRouteError;
}

/** What conversation search reads: the user's zone, the message and episode stores and vectors, the query embeddings. */
export type ConversationSearchDeps = Pick<ServiceDeps, 'settings' | 'embedder' | 'episodeVectors' | 'exchangeVectors' | 'messageSearch' | 'episodes' | 'config'> & Partial<Pick<ServiceDeps, 'exchangeIndex'>>;

/**
 * L0 conversation search, for what extraction did not keep: the user's raw conversations searched
 * by keywords (BM25 over messages), by the dates the query names, and through episodes (keywords,
 * dates, vectors). Returns exchanges with their dates; messages the user asked to forget never
 * appear. Like recall, a failed route is reported in `error` while the others still answer.
 */
export async function searchConversations(
  deps: ConversationSearchDeps,
  userId: string,
  rawQuery: string,
  opts: { topK?: number; maxLines?: number; now?: Date; timeZone?: string; fallbackTimeZone?: string; timeoutMs?: number } = {},
): Promise<ConversationSearchResult> {
  const now = opts.now ?? new Date();
  const deadline = Date.now() + (opts.timeoutMs ?? deps.config.recall.timeoutMs);
  const query = sanitizeQuery(rawQuery);
  const timeZone = await resolveTimeZone(deps, userId, opts.timeZone, opts.fallbackTimeZone);
  const ranges = query.length > 0 ? parseQueryDates(query, { now, timeZone }) : [];
  let embedding: Promise<number[]> | undefined;
  const found = await searchExchanges(deps, userId, {
    tokens: tokenizeForIndex(query),
    query,
    ranges,
    limit: opts.topK ?? 5,
    ...(opts.maxLines !== undefined ? { maxLines: opts.maxLines } : {}),
    mode: 'past',
    now,
    deadline,
    ...(query.length > 0 ? { embedding: () => (embedding ??= deps.embedder.embedQuery({ text: query })) } : {}),
  });
  const line = (l: { messageId: string; content: string; at: Date } | undefined): FoundLine | undefined =>
    l ? { id: l.messageId, text: l.content, at: l.at.toISOString() } : undefined;
  const error = foldRouteFailures(found.failures);
  return {
    exchanges: found.exchanges.map((x) => ({
      conversationId: x.conversationId,
      date: x.date.toISOString(),
      messageIds: x.messageIds,
      ...(x.user ? { user: line(x.user) } : {}),
      ...(x.assistant ? { assistant: line(x.assistant) } : {}),
      score: x.score,
      routes: x.routes,
      inRange: x.inRange,
    })),
    dateRanges: ranges.map((r) => ({ text: r.text, start: r.start.toISOString(), end: r.end.toISOString() })),
    timeZone,
    routes: found.routes,
    ...(error ? { error } : {}),
  };
}
