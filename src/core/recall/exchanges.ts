/**
 * Past exchanges (L0 conversation recall): a raw user line with the assistant line that answered
 * it, found by keyword search over messages, by the date a query names, or through the episode
 * of that day. Pure: the adapters fetch rows, this module pairs, filters and orders them.
 */
import type { DateRange } from '../time/query-dates';
import type { MessageRole } from '../types';
import { fuseRankings, type RouteRanking } from './rrf';

/** A stored message as the exchange builder needs it. */
export interface StoredLine {
  conversationId: string;
  messageId: string;
  seq: number;
  role: MessageRole;
  content: string;
  at: Date;
}

/** A (conversation, message) reference. */
export interface MessageRef {
  conversationId: string;
  messageId: string;
}

/** A message found by a search, with how well it matched. */
export interface MessageHit extends MessageRef {
  score: number;
  /** Distinct query terms the message contains. */
  matched: string[];
}

/** A stored line and whether it must stay out of what is shown. */
export type ShownLine = StoredLine & { hidden: boolean };

/** One user line and the assistant line that answered it (either may be missing). */
export interface ExchangeCandidate {
  /** Stable identity of the pair, so the same exchange found by several routes is one. */
  key: string;
  conversationId: string;
  user?: StoredLine;
  assistant?: StoredLine;
  /** When the exchange happened: the user line's time, else the assistant's. */
  date: Date;
  messageIds: string[];
}

/** An exchange chosen by {@link rankExchanges}. */
export interface RankedExchange extends ExchangeCandidate {
  score: number;
  routes: string[];
  /** Said inside one of the query's date ranges. */
  inRange: boolean;
}

/**
 * A line without its counterpart ("Love it.", "好的") says nothing on its own; below this many
 * code points such a one-sided exchange is not worth a line of the budget.
 */
export const MIN_LONE_LINE_CODE_POINTS = 12;

/** Key of a message inside a user's data (message ids are unique per conversation only). */
export function messageKey(conversationId: string, messageId: string): string {
  return `${conversationId}\u0000${messageId}`;
}

/**
 * The exchange around `anchor`: a user line pairs with the assistant line right after it, an
 * assistant line with the user line right before it. Lines of the same role never pair.
 */
export function pairExchange(anchor: StoredLine, previous?: StoredLine, next?: StoredLine): ExchangeCandidate {
  const same = (x?: StoredLine): x is StoredLine => x !== undefined && x.conversationId === anchor.conversationId;
  const user = anchor.role === 'user' ? anchor : same(previous) && previous.role === 'user' ? previous : undefined;
  const assistant = anchor.role === 'assistant' ? anchor : same(next) && next.role === 'assistant' ? next : undefined;
  const lines = [user, assistant].filter((x): x is StoredLine => x !== undefined);
  return {
    key: lines.map((l) => messageKey(l.conversationId, l.messageId)).join('\u0001'),
    conversationId: anchor.conversationId,
    ...(user ? { user } : {}),
    ...(assistant ? { assistant } : {}),
    date: (user ?? anchor).at,
    messageIds: lines.map((l) => l.messageId),
  };
}

/** True when `at` falls in one of the ranges ([start, end)). */
export function inRanges(at: Date, ranges: readonly Pick<DateRange, 'start' | 'end'>[]): boolean {
  const t = at.getTime();
  return ranges.some((r) => t >= r.start.getTime() && t < r.end.getTime());
}

/** Input of {@link rankExchanges}. */
export interface RankExchangesInput {
  /** One ranking per route; ids are exchange keys. */
  rankings: readonly RouteRanking[];
  exchanges: ReadonlyMap<string, ExchangeCandidate>;
  /** Date ranges the query named; exchanges inside them come first. */
  ranges: readonly Pick<DateRange, 'start' | 'end'>[];
  /** Message keys that must never be shown (forgotten, or stale when asked without a past cue). */
  hidden: ReadonlySet<string>;
  /**
   * Keep only exchanges that matched at least this many distinct query terms (route-independent
   * evidence); exchanges in a named date range are exempt, the date is their evidence.
   */
  minMatchedTerms?: number;
  /** Distinct query terms matched per exchange key. */
  matchedTerms?: ReadonlyMap<string, number>;
  limit: number;
  /** RRF constant of the fusion (default {@link RRF_K}). */
  rrfK?: number;
}

/**
 * Fuses the routes' exchange rankings with RRF, drops hidden and unsupported exchanges, and
 * orders what is left: exchanges from the named date range first, then by fused score.
 */
export function rankExchanges(input: RankExchangesInput): RankedExchange[] {
  const out: RankedExchange[] = [];
  for (const fused of fuseRankings(input.rankings, input.rrfK)) {
    const x = input.exchanges.get(fused.id);
    if (!x) continue;
    const lines = [x.user, x.assistant].filter((l): l is StoredLine => l !== undefined);
    if (lines.some((l) => input.hidden.has(messageKey(l.conversationId, l.messageId)))) continue;
    if (lines.length === 1 && Array.from(lines[0]!.content.trim()).length < MIN_LONE_LINE_CODE_POINTS) continue;
    const inRange = input.ranges.length > 0 && lines.some((l) => inRanges(l.at, input.ranges));
    if (!inRange && input.minMatchedTerms !== undefined && (input.matchedTerms?.get(x.key) ?? 0) < input.minMatchedTerms) continue;
    out.push({ ...x, score: fused.score, routes: fused.routes, inRange });
  }
  // Stable: within each group the fused order stands.
  out.sort((a, b) => Number(b.inRange) - Number(a.inRange));
  return out.slice(0, Math.max(0, input.limit));
}

/** Cuts text to `max` code points (never inside a surrogate pair), marking the cut with "…". */
export function cutCodePoints(text: string, max: number): string {
  const cps = Array.from(text);
  return cps.length <= max ? text : `${cps.slice(0, Math.max(0, max - 1)).join('')}…`;
}

/** Longest line embedded (code points); e5 reads 512 tokens, the rest is noise. */
export const MAX_EXCHANGE_TEXT_CODE_POINTS = 1500;

/** One line to embed, and the text its vector is made of. */
export interface IndexableLine {
  line: StoredLine;
  text: string;
}

/**
 * What the exchange indexer embeds: each line on its own, so a vector hit names the line that
 * matched (search pairs it with its partner, as it pairs a keyword hit). A pair's vector blurred
 * an answer into its partner's words and could not tell which half matched. Empty lines are left
 * out and long ones cut.
 */
export function indexableLines(lines: readonly StoredLine[]): IndexableLine[] {
  return lines.flatMap((line) => {
    const text = cutCodePoints(line.content.trim(), MAX_EXCHANGE_TEXT_CODE_POINTS);
    return text === '' ? [] : [{ line, text }];
  });
}

/** One exchange to embed: the lines it pairs, in order, and the text its vector is made of. */
export interface IndexableExchange {
  conversationId: string;
  /** The exchange's first message, which anchors it (its vector id derives from it). */
  anchor: StoredLine;
  lines: StoredLine[];
  text: string;
}

/**
 * Pairs consecutive lines (seq order, one conversation) into exchanges the way
 * {@link pairExchange} pairs a search hit: a user line with the assistant line right after it;
 * any other line stands alone. Empty lines are left out.
 */
export function pairLines(lines: readonly StoredLine[]): IndexableExchange[] {
  const out: IndexableExchange[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = lines[i]!;
    const next = lines[i + 1];
    const pair = first.role === 'user' && next?.role === 'assistant' ? [first, next] : [first];
    if (pair.length === 2) i++;
    const text = cutCodePoints(pair.map((l) => l.content.trim()).filter((t) => t !== '').join('\n'), MAX_EXCHANGE_TEXT_CODE_POINTS);
    if (text !== '') out.push({ conversationId: first.conversationId, anchor: first, lines: pair, text });
  }
  return out;
}

/** The messages of the episodes one episode route matched (keys from {@link messageKey}). */
export interface EpisodeMatch {
  route: string;
  messageKeys: ReadonlySet<string>;
}

/**
 * Episodes point to sessions, exchanges answer: an episode route only re-ranks exchanges the
 * answering routes (words, vectors, dates) already found, inside the sessions it matched, in their
 * own fused order, and at most `perRoute` of them. An exchange of a matching session that nothing
 * else found gets no vote, so a session's greetings never ride on its summary.
 */
export function episodeBoosts(input: {
  answering: readonly RouteRanking[];
  episodes: readonly EpisodeMatch[];
  exchanges: ReadonlyMap<string, ExchangeCandidate>;
  perRoute: number;
  /** RRF constant of the answering routes' order (default {@link RRF_K}), as the final ranking uses. */
  rrfK?: number;
}): RouteRanking[] {
  const order = fuseRankings(input.answering, input.rrfK).map((f) => f.id);
  return input.episodes.flatMap(({ route, messageKeys }) => {
    const ids = order
      .filter((id) => {
        const x = input.exchanges.get(id);
        return x !== undefined && x.messageIds.some((m) => messageKeys.has(messageKey(x.conversationId, m)));
      })
      .slice(0, Math.max(0, input.perRoute));
    return ids.length > 0 ? [{ route, ids }] : [];
  });
}

/**
 * Fits ranked exchanges into a budget counted in lines: each exchange, best first, keeps the lines
 * some route found (`found`, message keys) and drops a partner nothing found, which would spend a
 * line of the budget on words that matched nothing; an exchange whose lines none was found (it
 * came in by date or episode alone) keeps both. The last exchange is cut to the lines that still
 * fit, its found line first. Order, scores and routes are unchanged.
 */
export function fitLines(ranked: readonly RankedExchange[], found: ReadonlySet<string>, maxLines: number): RankedExchange[] {
  const out: RankedExchange[] = [];
  let left = Math.max(0, maxLines);
  for (const x of ranked) {
    if (left === 0) break;
    const lines = [x.user, x.assistant].filter((l): l is StoredLine => l !== undefined);
    const hit = lines.filter((l) => found.has(messageKey(l.conversationId, l.messageId)));
    const kept = (hit.length > 0 ? hit : lines).slice(0, left);
    const keep = new Set(kept);
    if (kept.length === 0) continue;
    left -= kept.length;
    const user = x.user && keep.has(x.user) ? x.user : undefined;
    const assistant = x.assistant && keep.has(x.assistant) ? x.assistant : undefined;
    const { user: _u, assistant: _a, ...rest } = x;
    out.push({ ...rest, ...(user ? { user } : {}), ...(assistant ? { assistant } : {}), date: (user ?? assistant ?? x.user ?? x.assistant)!.at, messageIds: [user, assistant].flatMap((l) => (l ? [l.messageId] : [])) });
  }
  return out;
}
