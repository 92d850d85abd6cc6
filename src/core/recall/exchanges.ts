/**
 * Past exchanges (L0 conversation recall): a raw user line with the assistant line that answered
 * it, found by keyword search over messages, by the date a query names, or through the episode
 * of that day. Pure: the adapters fetch rows, this module pairs, filters and orders them.
 */
import type { DateRange } from '../time/query-dates';
import { messageKey, type ExchangeCandidate, type StoredLine } from '../exchange-lines';
import { fuseRankings, type RouteRanking } from './rrf';

// The line shape and how lines pair are the conversation's too (its exchange index, the ports,
// episodes), so they live in the kernel; recall code and tests keep importing them from here.
export {
  indexableLines,
  MAX_EXCHANGE_TEXT_CODE_POINTS,
  messageKey,
  pairExchange,
  pairLines,
  type ExchangeCandidate,
  type IndexableExchange,
  type IndexableLine,
  type MessageHit,
  type MessageRef,
  type ShownLine,
  type StoredLine,
} from '../exchange-lines';
export { cutCodePoints } from '../text/code-points';

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

/** A line that ends by asking (its last sentence is a question): the line after it is its answer. */
export function asksQuestion(content: string): boolean {
  return /[?？][\s"'”’)）]*$/u.test(content.trim());
}

/**
 * Fits ranked exchanges into a budget counted in lines: each exchange, best first, keeps the lines
 * some route found (`found`, message keys) and drops a partner nothing found, which would spend a
 * line of the budget on words that matched nothing; an exchange whose lines none was found (it
 * came in by date or episode alone) keeps both. A kept line that asks a question brings its answer
 * (`answers`: message key → the line after it): its partner when that is the reply, else the next
 * line, shown right after the exchange (same score and routes). A line is shown once. The last
 * exchange is cut to the lines that still fit, its found line first. Order, scores and routes are
 * unchanged.
 */
export function fitLines(ranked: readonly RankedExchange[], found: ReadonlySet<string>, maxLines: number, answers: ReadonlyMap<string, StoredLine> = new Map()): RankedExchange[] {
  const out: RankedExchange[] = [];
  const shown = new Set<string>();
  const keyOf = (l: StoredLine) => messageKey(l.conversationId, l.messageId);
  let left = Math.max(0, maxLines);
  const emit = (x: RankedExchange, kept: StoredLine[]) => {
    const keep = new Set(kept);
    for (const l of kept) shown.add(keyOf(l));
    left -= kept.length;
    const user = x.user && keep.has(x.user) ? x.user : undefined;
    const assistant = x.assistant && keep.has(x.assistant) ? x.assistant : undefined;
    const { user: _u, assistant: _a, ...rest } = x;
    out.push({ ...rest, ...(user ? { user } : {}), ...(assistant ? { assistant } : {}), date: (user ?? assistant ?? x.user ?? x.assistant)!.at, messageIds: [user, assistant].flatMap((l) => (l ? [l.messageId] : [])) });
  };
  for (const x of ranked) {
    if (left === 0) break;
    const lines = [x.user, x.assistant].filter((l): l is StoredLine => l !== undefined);
    const hit = lines.filter((l) => found.has(keyOf(l)));
    let kept = (hit.length > 0 ? hit : lines).filter((l) => !shown.has(keyOf(l)));
    const follow: StoredLine[] = [];
    for (const l of kept) {
      const a = answers.get(keyOf(l));
      if (!a || shown.has(keyOf(a)) || kept.includes(a) || follow.some((f) => keyOf(f) === keyOf(a))) continue;
      const inside = lines.find((m) => keyOf(m) === keyOf(a));
      if (inside) kept = lines.filter((m) => kept.includes(m) || m === inside);
      else follow.push(a);
    }
    kept = kept.slice(0, left);
    if (kept.length === 0) continue;
    emit(x, kept);
    for (const a of follow) {
      if (left === 0) break;
      const { user: _u, assistant: _a, ...rest } = x;
      emit({ ...rest, key: keyOf(a), ...(a.role === 'user' ? { user: a } : { assistant: a }), date: a.at, messageIds: [a.messageId] }, [a]);
    }
  }
  return out;
}

/** Input of {@link rankLines}. */
export interface RankLinesInput {
  /** One ranking per answering route; ids are message keys (a pair hit ranks both of its lines). */
  rankings: readonly RouteRanking[];
  /**
   * Sets of lines (message keys) that vouch for the answering routes' lines inside them, the
   * graph's lines naming the query's entities: each becomes one more ranking, the answering
   * routes' own fused order of its lines, at most `boostsPerSet` (episodeBoosts).
   */
  boostSets?: readonly EpisodeMatch[];
  boostsPerSet?: number;
  /** The lines that can be shown, by message key. */
  lines: ReadonlyMap<string, StoredLine>;
  ranges: readonly Pick<DateRange, 'start' | 'end'>[];
  hidden: ReadonlySet<string>;
  /** Message key of a line that asks → the line after it, its answer (see fitLines). */
  answers?: ReadonlyMap<string, StoredLine>;
  maxLines: number;
  rrfK?: number;
}

/**
 * A budget counted in lines, filled from a ranking of lines: the answering routes' line rankings
 * (BM25 over messages, line vectors, a pair vector for both of its lines, named dates) fused with
 * RRF (episodes, which name sessions, boost no line: measured, see exchange-search), lines said
 * on a named date first, a short line on its own ("Love it.") skipped, and a line that asks followed by its answer. Ranking exchanges first
 * and trimming them to their found lines let a line ride on its partner's votes and cut the line
 * ranking short of the budget; this is the plain fusion of the same routes over lines, which every
 * route's best lines reach. Each line is returned as a one-line exchange, best first.
 */
export function rankLines(input: RankLinesInput): RankedExchange[] {
  const single = (l: StoredLine): ExchangeCandidate => ({
    key: messageKey(l.conversationId, l.messageId),
    conversationId: l.conversationId,
    ...(l.role === 'user' ? { user: l } : { assistant: l }),
    date: l.at,
    messageIds: [l.messageId],
  });
  const candidates = new Map([...input.lines].map(([k, l]) => [k, single(l)] as const));
  const boosts = input.boostSets
    ? episodeBoosts({ answering: input.rankings, episodes: input.boostSets, exchanges: candidates, perRoute: input.boostsPerSet ?? 0, ...(input.rrfK !== undefined ? { rrfK: input.rrfK } : {}) })
    : [];
  const ranked = rankExchanges({
    rankings: [...input.rankings, ...boosts],
    exchanges: candidates,
    ranges: input.ranges,
    hidden: input.hidden,
    limit: candidates.size,
    ...(input.rrfK !== undefined ? { rrfK: input.rrfK } : {}),
  });
  return fitLines(ranked, new Set(ranked.map((x) => x.key)), input.maxLines, input.answers);
}
