/**
 * The episodic part of recall, for questions about what was said rather than what is known: reads
 * the dates a query names (time route), decides
 * whether past exchanges belong in the context (the query refers to the shared past, names a
 * date, or the memory hits are weak), and turns found exchanges into the injected section.
 * Kept apart from recall.ts so the memory hot path stays readable.
 */
import { storedTimeZone } from '../account/settings';
import type { PastExchange } from '../core/recall/format';
import { cutCodePoints, inRanges, type RankedExchange } from '../core/recall/exchanges';
import { parseQueryDates, refersToSharedPast, type DateRange } from '../core/time/query-dates';
import { searchExchanges, type ExchangeSearchResult } from './exchange-search';
import type { ServiceDeps } from '../shared/deps';
import { isValidTimeZone } from '../core/time/zones';

/** What the episodic routes read: the message and episode stores, and the episode and exchange vectors when configured. */
export type EpisodicDeps = Pick<ServiceDeps, 'messageSearch' | 'episodes' | 'episodeVectors' | 'exchangeVectors'>;

/** "The best few raw exchanges": more would crowd out memories in the shared budget. */
export const MAX_PAST_EXCHANGES = 3;
/** Each side of an injected exchange is cut to this many code points before the budget applies. */
export const EXCHANGE_USER_CODE_POINTS = 200;
export const EXCHANGE_ASSISTANT_CODE_POINTS = 300;
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
  /** The query refers to the shared past or names a date: exchanges are read as history. */
  past: boolean;
  /** The query asks what was said ("你之前…", "did I", "you told me"), not just about a date. */
  asksWhatWasSaid: boolean;
}

/**
 * Stored zones, cached briefly per process: the lookup would otherwise sit in front of the date
 * routes on every recall, and a zone changed in the settings is picked up within a minute.
 */
const ZONE_TTL_MS = 60_000;
const ZONE_CACHE_LIMIT = 50_000;
const zoneCache = new Map<string, { zone: string | undefined; until: number }>();

async function storedZone(deps: Pick<ServiceDeps, 'settings'>, userId: string): Promise<string | undefined> {
  const cached = zoneCache.get(userId);
  if (cached && cached.until > Date.now()) return cached.zone;
  const zone = await storedTimeZone(deps, userId);
  if (zoneCache.size >= ZONE_CACHE_LIMIT) zoneCache.delete(zoneCache.keys().next().value!);
  zoneCache.set(userId, { zone, until: Date.now() + ZONE_TTL_MS });
  return zone;
}

function validZone(zone: string | undefined): string | undefined {
  return isValidTimeZone(zone) ? zone : undefined;
}

/**
 * The zone a user's dates mean: the request's zone, else the user's stored zone, else the hint
 * (the offset the request's `now` was written with), else UTC. A stored 'UTC' is the column's
 * default, i.e. "unknown", so a hint wins over it.
 */
export async function resolveTimeZone(deps: Pick<ServiceDeps, 'settings'>, userId: string, explicit?: string, hint?: string): Promise<string> {
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
  const asksWhatWasSaid = refersToSharedPast(query);
  return { timeZone: opts.timeZone, ranges, past: ranges.length > 0 || asksWhatWasSaid, asksWhatWasSaid };
}

/**
 * Candidates fetched per recall: more than are injected, because an exchange that repeats a
 * memory is dropped after the search (inject.ts) and the next one takes its place.
 */
const EXCHANGE_CANDIDATES = 2 * MAX_PAST_EXCHANGES;

/** Whether there is anything to search exchanges by: words, or dates the query names about the past. */
export function hasExchangeEvidence(tokens: readonly string[], plan: EpisodicPlan): boolean {
  return tokens.length > 0 || (plan.past && plan.ranges.length > 0);
}

/**
 * The past exchanges searched on every recall, beside the memory routes and with the same query
 * embedding: by words, by the dates the query names, through episodes, by vector. A question
 * about the shared past (or a date) reads history as it was (`past`: only what the user asked to
 * forget is hidden). Any other query reads it as evidence (`weak`): the sources of superseded or
 * expired memories stay hidden, and a line must itself contain enough of the query's words, so an
 * exchange gets in because it is relevant on its own, never as the least bad of the lot.
 */
export function exchangeSearchForRecall(
  deps: EpisodicDeps,
  userId: string,
  input: {
    tokens: string[];
    plan: EpisodicPlan;
    now: Date;
    deadline: number;
    embedding?: () => Promise<number[]>;
    /** For a query not about the past: an exchange this close by vector counts as evidence without the query's words. */
    minVectorSimilarity?: number;
  },
): Promise<ExchangeSearchResult> {
  const past = input.plan.past;
  if (!hasExchangeEvidence(input.tokens, input.plan)) return Promise.resolve({ exchanges: [], routes: [], failures: [] });
  return searchExchanges(deps, userId, {
    tokens: input.tokens,
    ranges: past ? input.plan.ranges : [],
    limit: EXCHANGE_CANDIDATES,
    mode: past ? 'past' : 'weak',
    now: input.now,
    deadline: input.deadline,
    ...(input.embedding ? { embedding: input.embedding } : {}),
    ...(!past && input.minVectorSimilarity !== undefined ? { minVectorSimilarity: input.minVectorSimilarity } : {}),
  });
}

/** The last exchange about a memory is the latest of this many best word matches. */
const LAST_EXCHANGE_POOL = 3;

/**
 * The last exchange about a memory (a vague follow-up's pain point): the most recent of the
 * exchanges whose own lines contain enough of the memory's words (`weak`: half of its distinct
 * terms; the sources of superseded memories hidden, so a resolved problem's exchange never stands
 * in for the open one's).
 */
export async function lastExchangeAbout(
  deps: Omit<EpisodicDeps, 'exchangeVectors'>,
  userId: string,
  input: { tokens: string[]; now: Date; deadline: number },
): Promise<{ exchange?: RankedExchange; search: ExchangeSearchResult }> {
  const search = await searchExchanges(deps, userId, { tokens: input.tokens, ranges: [], limit: EXCHANGE_CANDIDATES, mode: 'weak', now: input.now, deadline: input.deadline });
  // Episode routes vote for every line of a matching session: only lines that match themselves, the best few.
  const worded = search.exchanges.filter((x) => x.routes.some((r) => !r.startsWith('episode_'))).slice(0, LAST_EXCHANGE_POOL);
  const exchange = worded.reduce<RankedExchange | undefined>((latest, x) => (!latest || x.date > latest.date ? x : latest), undefined);
  return { ...(exchange ? { exchange } : {}), search };
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
