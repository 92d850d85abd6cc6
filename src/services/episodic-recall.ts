/**
 * The episodic part of recall, for questions about what was said rather than what is known: reads
 * the dates a query names (time route), decides
 * whether past exchanges belong in the context (the query refers to the shared past, names a
 * date, or the memory hits are weak), and turns found exchanges into the injected section.
 * Kept apart from recall.ts so the memory hot path stays readable.
 */
import { IANAZone } from 'luxon';
import { userStore } from '../adapters/postgres/user-repository';
import type { PastExchange } from '../core/recall/format';
import { cutCodePoints, inRanges, type RankedExchange } from '../core/recall/exchanges';
import { parseQueryDates, refersToSharedPast, type DateRange } from '../core/time/query-dates';
import { searchExchanges, type ExchangeSearchResult } from './exchange-search';
import type { ServiceDeps } from './deps';

/** "The best few raw exchanges": more would crowd out memories in the shared budget. */
export const MAX_PAST_EXCHANGES = 3;
/** Each side of an injected exchange is cut to this many code points before the budget applies. */
export const EXCHANGE_USER_CODE_POINTS = 200;
export const EXCHANGE_ASSISTANT_CODE_POINTS = 300;
/**
 * Memory hits are "weak" when no memory shares a word with the query (BM25 found nothing) and the
 * nearest memory vector is below this cosine. Measured with multilingual-e5-small on query/memory
 * pairs of the evaluation's kind: related pairs 0.80–0.90, unrelated 0.73–0.79 in English but
 * 0.83–0.87 in Chinese, so the cosine only vetoes the fallback when a memory is clearly close;
 * the fallback itself must still share words with the query (see minMatchedTerms).
 */
export const WEAK_ANN_SIMILARITY = 0.85;

/** A past exchange as the recall response lists it. */
export interface RecalledExchange {
  conversationId: string;
  /** ISO time of the exchange (the user line's time). */
  date: string;
  messageIds: string[];
  userText: string;
  assistantText: string;
  score: number;
  routes: string[];
}

/** What the query asks of the episodic routes. */
export interface EpisodicPlan {
  /** The zone dates are read and shown in. */
  timeZone: string;
  /** Date ranges named by the query ([] when none, or when the time route is off). */
  ranges: DateRange[];
  /** The query refers to the shared past or names a date: exchanges are searched in parallel. */
  past: boolean;
}

/**
 * Stored zones, cached briefly per process: the lookup would otherwise sit in front of the date
 * routes on every recall, and a zone changed in the settings is picked up within a minute.
 */
const ZONE_TTL_MS = 60_000;
const ZONE_CACHE_LIMIT = 50_000;
const zoneCache = new Map<string, { zone: string | undefined; until: number }>();

async function storedZone(deps: Pick<ServiceDeps, 'pool'>, userId: string): Promise<string | undefined> {
  const cached = zoneCache.get(userId);
  if (cached && cached.until > Date.now()) return cached.zone;
  const zone = await userStore.timeZoneOf(deps.pool, userId);
  if (zoneCache.size >= ZONE_CACHE_LIMIT) zoneCache.delete(zoneCache.keys().next().value!);
  zoneCache.set(userId, { zone, until: Date.now() + ZONE_TTL_MS });
  return zone;
}

function validZone(zone: string | undefined): string | undefined {
  return zone !== undefined && IANAZone.isValidZone(zone) ? zone : undefined;
}

/**
 * The zone a user's dates mean: the request's zone, else the user's stored zone, else the hint
 * (the offset the request's `now` was written with), else UTC. A stored 'UTC' is the column's
 * default, i.e. "unknown", so a hint wins over it.
 */
export async function resolveTimeZone(deps: Pick<ServiceDeps, 'pool'>, userId: string, explicit?: string, hint?: string): Promise<string> {
  const requested = validZone(explicit);
  if (requested) return requested;
  const stored = validZone(await storedZone(deps, userId));
  if (stored && stored !== 'UTC') return stored;
  return validZone(hint) ?? stored ?? 'UTC';
}

/** {@link resolveTimeZone} when the stored zone cannot be read (the failure is reported by the caller). */
export function resolveTimeZoneWithoutStore(explicit?: string, hint?: string): string {
  return validZone(explicit) ?? validZone(hint) ?? 'UTC';
}

/** Reads the dates and the shared-past cue of a query, in an already resolved, valid zone. */
export function planEpisodic(query: string, opts: { now: Date; timeZone: string; timeRoute: boolean }): EpisodicPlan {
  // "Next week" in a query is about plans, not about the shared past: only ranges that have begun count.
  const ranges = opts.timeRoute && query.length > 0 ? parseQueryDates(query, opts).filter((r) => r.start < opts.now) : [];
  return { timeZone: opts.timeZone, ranges, past: ranges.length > 0 || refersToSharedPast(query) };
}

/**
 * Past exchanges searched alongside the memory routes, for a query about the shared past: by
 * words, by the named dates and through episodes (words and dates). The episode vectors are left
 * to conversation search: in recall the memory ANN route already carries the semantics (what the
 * assistant recommended is an assistant_contribution memory), and a second vector query on every
 * such recall costs more latency than the few paraphrase-only exchanges it would add.
 */
export function pastExchangeSearch(
  deps: Pick<ServiceDeps, 'pool'>,
  userId: string,
  input: { tokens: string[]; plan: EpisodicPlan; now: Date; deadline: number },
): Promise<ExchangeSearchResult> {
  return searchExchanges(deps, userId, { tokens: input.tokens, ranges: input.plan.ranges, limit: MAX_PAST_EXCHANGES, mode: 'past', now: input.now, deadline: input.deadline });
}

/** Fallback exchanges when the memories found nothing solid: keyword evidence only, stale sources hidden. */
export function weakHitExchangeSearch(
  deps: Pick<ServiceDeps, 'pool'>,
  userId: string,
  input: { tokens: string[]; now: Date; deadline: number },
): Promise<ExchangeSearchResult> {
  return searchExchanges(deps, userId, { tokens: input.tokens, ranges: [], limit: MAX_PAST_EXCHANGES, mode: 'weak', now: input.now, deadline: input.deadline });
}

/** True when no memory shares a word with the query and none is semantically close. */
export function memoryHitsAreWeak(input: { bm25Hits: number; bestSimilarity: number }): boolean {
  return input.bm25Hits === 0 && input.bestSimilarity < WEAK_ANN_SIMILARITY;
}

/** Stable partition: items whose time lies in the ranges first (the time route ranks them first). */
export function inRangeFirst<T>(items: readonly T[], ranges: readonly DateRange[], timeOf: (item: T) => Date): T[] {
  if (ranges.length === 0) return [...items];
  return [...items.filter((x) => inRanges(timeOf(x), ranges)), ...items.filter((x) => !inRanges(timeOf(x), ranges))];
}

/** The exchanges as formatContext takes them, each side cut on code points. */
export function toPastExchanges(exchanges: readonly RankedExchange[]): PastExchange[] {
  return exchanges.map((x) => ({
    date: x.date,
    userText: cutCodePoints(x.user?.content ?? '', EXCHANGE_USER_CODE_POINTS),
    assistantText: cutCodePoints(x.assistant?.content ?? '', EXCHANGE_ASSISTANT_CODE_POINTS),
    messageIds: x.messageIds,
  }));
}

/** The response's view of the exchanges that made it into the context. */
export function recalledExchanges(exchanges: readonly RankedExchange[], injectedMessageIds: readonly string[]): RecalledExchange[] {
  const injected = new Set(injectedMessageIds);
  const past = toPastExchanges(exchanges);
  return exchanges.flatMap((x, i) =>
    x.messageIds.every((id) => injected.has(id))
      ? [{ conversationId: x.conversationId, date: x.date.toISOString(), messageIds: x.messageIds, userText: past[i]!.userText, assistantText: past[i]!.assistantText, score: x.score, routes: x.routes }]
      : [],
  );
}
