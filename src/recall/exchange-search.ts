import type { Episode } from '../core/episodes/ports';
import type { ExchangeVectorUnit } from '../core/ports/recall';
import {
  asksQuestion,
  episodeBoosts,
  messageKey,
  type MessageHit,
  type MessageRef,
  pairExchange,
  rankExchanges,
  rankLines,
  type ExchangeCandidate,
  type RankedExchange,
  type StoredLine,
} from '../core/recall/exchanges';
import { fuseRankings, type RouteRanking } from '../core/recall/rrf';
import { graphLines, hopKeys } from '../core/recall/entity-lines';
import { candidateKeys } from '../core/recall/graph';
import { speakerFocus } from '../core/recall/speakers';
import type { DateRange } from '../core/time/query-dates';
import { withDeadline } from './deadline';
import type { ServiceDeps } from '../shared/deps';
import { runRoutes, type RouteFailure, type RouteReport } from './route-runner';

/** Routes of the exchange search, as reported per request. */
export const ExchangeRoute = {
  /** BM25 over all of the user's raw messages. */
  messages: 'exchange_bm25',
  /** Exchanges (a user line and its reply) by vector similarity to the query. */
  ann: 'exchange_ann',
  /** Single lines by vector similarity to the query (the line that matched, undiluted by its partner). */
  lineAnn: 'exchange_line_ann',
  /** Messages said inside the query's date ranges (matching ones first). */
  time: 'exchange_time',
  /** Episodes by BM25 over their summaries and by date overlap: boosts exchanges found inside them. */
  episodes: 'episode_bm25',
  /** Episodes by vector similarity of their summaries: boosts exchanges found inside them. */
  episodeAnn: 'episode_ann',
  /** Lines naming the query's entities, then lines naming the entities said beside them (one hop). */
  graph: 'exchange_graph',
  /**
   * Not a route of its own: the ranking that vouches for what the person the query asks about told
   * (a transcript's "Name:" speaker), among the lines the answering routes found (speakerFocus).
   */
  speaker: 'exchange_speaker',
} as const;
export type ExchangeRoute = (typeof ExchangeRoute)[keyof typeof ExchangeRoute];

/**
 * Why the search runs, which decides what may be shown:
 * - `past`: the user asks about the shared past (or names a date), or searches conversations:
 *   only what they asked to forget is hidden — history is history, and it is shown with its date;
 * - `weak`: recall found no good memory and falls back to raw exchanges: the sources of
 *   superseded or expired memories are hidden too (stale), and an exchange must share enough
 *   words with the query to count as evidence.
 */
export type ExchangeSearchMode = 'past' | 'weak';

export interface ExchangeSearchInput {
  /** Index tokens of the query (tokenizeForIndex). */
  tokens: string[];
  /** The query's text, for the entities it names (the graph sub-route); omitted: no graph route. */
  query?: string;
  ranges: readonly DateRange[];
  limit: number;
  mode: ExchangeSearchMode;
  now: Date;
  /** Epoch ms after which a route counts as failed (dependencyTimeout). */
  deadline: number;
  /** The query embedding, shared with the memory ANN route; omitted: no exchange or episode ANN route. */
  embedding?: () => Promise<number[]>;
  /**
   * `weak` mode only: also search exchanges by vector, and let one whose cosine similarity to the
   * query is at least this count as evidence without sharing the query's words (a paraphrase).
   * Unset: `weak` runs no vector route.
   */
  minVectorSimilarity?: number;
  /**
   * A budget counted in lines instead of `limit` exchanges: lines are also searched by their own
   * vectors, the routes are fused over lines (rankLines), and the best lines fill the budget, a
   * line that asks followed by its answer.
   */
  maxLines?: number;
}

export interface ExchangeSearchResult {
  exchanges: RankedExchange[];
  routes: RouteReport<ExchangeRoute>[];
  failures: RouteFailure[];
}

const MESSAGE_CANDIDATES = 30;
/** Fewest messages paired with their neighbours per search (see shortlist). */
const SHORTLIST_MIN = 12;
/**
 * Messages paired per exchange asked for. Three cut exchanges whose evidence sat a little lower
 * in both routes before the exchange-level fusion could see it (LoCoMo dev split: 0.607 → 0.613
 * alone, and the small k below needs the wider net).
 */
const SHORTLIST_PER_RESULT = 6;
/**
 * RRF constant of this search. The usual 60 lets an exchange two routes ranked middling beat one
 * a route ranked first; here the first ranks of BM25 over messages and of exchange vectors are
 * the answers, so they must count (LoCoMo dev split: 0.613 → 0.647 with the shortlist above).
 */
export const EXCHANGE_RRF_K = 5;
/** Messages of the named days: a day is usually a few dozen; the words route covers busier ones. */
const TIME_CANDIDATES = 40;
/** Exchanges by their pair vector: as many as BM25 gives messages. */
const ANN_CANDIDATES = 30;
/**
 * Lines by their own vector: a line is half a pair, so twice as many reach as far back (LoCoMo
 * dev split, 10 lines: 30 → 0.640, 60 → 0.660 and 0.667 in two runs).
 */
const LINE_ANN_CANDIDATES = 60;
const EPISODE_CANDIDATES = 8;
/**
 * Lines read per query entity: the lines that name it, latest first. Bounded (a key names at most
 * this many lines read), and deep enough that the lines of a person the user talks about often
 * are all there to vouch for.
 */
const GRAPH_SEED_LINES = 1000;
/** Lines read per entity of the hop. */
const GRAPH_HOP_LINES = 40;
/** An entity named in more lines than this is a hub: the hop neither starts from it nor goes to it. */
const GRAPH_HUB_LINES = 40;
/** Entities the one hop reaches: the most co-mentioned beside the seeds. */
const GRAPH_FAN_OUT = 8;
/**
 * Lines the graph, or a query about a speaker, may vouch for per search under a line budget: the
 * answering routes' best lines among those it reaches (as many as a budget of ten lines holds;
 * for the speaker, LoCoMo dev at 10 lines: 5 → 0.747, 10 → 0.753, 20 and 40 → 0.753).
 */
const VOUCHED_LINES = 10;
/** Exchanges one episode route may boost: those of its sessions the answering routes ranked best. */
const EPISODE_BOOSTS = 5;

/**
 * A route's result: message refs best first, with the query terms each matched (when known). An
 * episode route answers nothing itself: it names the messages of the sessions it matched.
 */
interface RouteOutput {
  refs: MessageRef[];
  matched?: MessageHit[];
  sessions?: Set<string>;
  /** What the route report counts (episodes for an episode route). */
  hits?: number;
  /** The refs name pairs by their first line: a hit does not say which of the two lines matched. */
  pairs?: boolean;
  /** Every ref is evidence on its own (vector hits above `minVectorSimilarity`), words or not. */
  evidence?: boolean;
  /** `sessions` are the graph's lines naming the query's entities, not an episode's sessions. */
  graphSet?: boolean;
}

function sessionsOf(episodes: readonly Episode[]): RouteOutput {
  const sessions = new Set(episodes.flatMap((e) => e.messageIds.map((m) => messageKey(e.conversationId, m))));
  return { refs: [], sessions, hits: episodes.length };
}

/** What the search reads: the message and episode stores, and the vector indexes when configured. */
export type ExchangeSearchDeps = Pick<ServiceDeps, 'messageSearch' | 'episodes'> & Partial<Pick<ServiceDeps, 'episodeVectors' | 'exchangeVectors' | 'exchangeIndex'>>;

function plan(deps: ExchangeSearchDeps, userId: string, input: ExchangeSearchInput): { route: ExchangeRoute; run: () => Promise<RouteOutput> }[] {
  const { tokens, ranges } = input;
  const tasks: { route: ExchangeRoute; run: () => Promise<RouteOutput> }[] = [];
  if (tokens.length > 0) {
    tasks.push({
      route: ExchangeRoute.messages,
      run: async () => {
        const hits = await deps.messageSearch.bm25({ userId, tokens, k: MESSAGE_CANDIDATES });
        return { refs: hits, matched: hits };
      },
    });
  }
  if (ranges.length > 0) {
    tasks.push({
      route: ExchangeRoute.time,
      run: async () => {
        // Inside the range, what matches the words comes first; then the rest of the day in order.
        const said = await deps.messageSearch.saidIn({ userId, tokens, ranges, k: TIME_CANDIDATES });
        return { refs: said, matched: said };
      },
    });
  }
  // A weak-hit fallback needs words shared with the query, which only the message index can show.
  if (input.mode === 'past' && (tokens.length > 0 || ranges.length > 0)) {
    tasks.push({
      route: ExchangeRoute.episodes,
      run: async () => {
        const { byWords, byDate } = await deps.episodes.search({ userId, tokens, ranges, k: EPISODE_CANDIDATES });
        const byId = new Map([...byWords, ...byDate].map((e) => [e.id, e]));
        const fused = fuseRankings([
          { route: 'words', ids: byWords.map((e) => e.id) },
          { route: 'date', ids: byDate.map((e) => e.id) },
        ]);
        return sessionsOf(fused.flatMap((f) => (byId.has(f.id) ? [byId.get(f.id)!] : [])));
      },
    });
  }
  // A weak-hit fallback keeps only lines that share words with the query, so neither vector route
  // could contribute to it (two Chroma queries thrown away on the recall hot path), unless the
  // caller sets a similarity floor that makes close exchange vectors evidence themselves.
  const byVector = input.mode === 'past';
  const floor = input.mode === 'weak' ? input.minVectorSimilarity : undefined;
  const exchangeIndex = deps.exchangeVectors;
  if ((byVector || floor !== undefined) && exchangeIndex && input.embedding) {
    const embed = input.embedding;
    // Line vectors pay off where lines are counted: with a line budget (LoCoMo dev, 10 lines:
    // 0.640 without them, 0.667 with them; five whole exchanges: 0.640 without, 0.620 with). So
    // recall, which injects whole exchanges, keeps to one Chroma query on its hot path, and the
    // similarity floor of its weak fallback stays on the pair vectors it was set on.
    const units: [ExchangeRoute, ExchangeVectorUnit, number][] = [[ExchangeRoute.ann, 'pair', ANN_CANDIDATES]];
    if (byVector && input.maxLines !== undefined) units.push([ExchangeRoute.lineAnn, 'line', LINE_ANN_CANDIDATES]);
    for (const [route, unit, k] of units) {
      tasks.push({
        route,
        run: async () => {
          const hits = (await exchangeIndex.query({ userId, embedding: await embed(), k, unit })).filter((h) => floor === undefined || h.similarity >= floor);
          return {
            refs: hits.map((h) => ({ conversationId: h.conversationId, messageId: h.messageId })),
            ...(unit === 'pair' ? { pairs: true } : {}),
            ...(floor !== undefined ? { evidence: true } : {}),
          };
        },
      });
    }
  }
  const graph = deps.exchangeIndex;
  if (byVector && graph?.entityLines && input.query !== undefined && input.query.length > 0) {
    const entityLines = graph.entityLines.bind(graph);
    const query = input.query;
    tasks.push({
      route: ExchangeRoute.graph,
      run: async () => {
        const keys = candidateKeys(query);
        if (keys.length === 0) return { refs: [] };
        const seeds = await entityLines({ userId, keys, perKey: GRAPH_SEED_LINES, countCap: GRAPH_SEED_LINES + 1, keysUpTo: GRAPH_HUB_LINES });
        const next = hopKeys(seeds, { hubLines: GRAPH_HUB_LINES, fanOut: GRAPH_FAN_OUT });
        const hop = next.length > 0 ? await entityLines({ userId, keys: next, perKey: GRAPH_HOP_LINES, countCap: GRAPH_HUB_LINES + 1, keysUpTo: 0 }) : [];
        const reached = graphLines(seeds, hop, { hubLines: GRAPH_HUB_LINES });
        return { refs: [], sessions: reached, hits: reached.size, graphSet: true };
      },
    });
  }
  const index = deps.episodeVectors;
  if (byVector && index && input.embedding) {
    const embed = input.embedding;
    tasks.push({
      route: ExchangeRoute.episodeAnn,
      run: async () => {
        const hits = await index.query({ userId, embedding: await embed(), k: EPISODE_CANDIDATES });
        const episodes = new Map((await deps.episodes.get({ userId, ids: hits.map((h) => h.id) })).map((e) => [e.id, e]));
        return sessionsOf(hits.flatMap((h) => (episodes.has(h.id) ? [episodes.get(h.id)!] : [])));
      },
    });
  }
  return tasks;
}

/**
 * The messages worth pairing: the best by message-level RRF over the routes, plus the first of
 * the time route (the named days come first later, so they must not be cut here). Pairing and the
 * hidden checks cost one query per candidate set, so a handful of times the requested number
 * is cheap, and a shorter list cuts answers before the exchange-level fusion sees them.
 */
function shortlist(outputs: readonly { route: ExchangeRoute; out: RouteOutput }[], limit: number): MessageRef[] {
  const n = Math.max(SHORTLIST_MIN, limit * SHORTLIST_PER_RESULT);
  const byKey = new Map<string, MessageRef>();
  for (const { out } of outputs) for (const r of out.refs) byKey.set(messageKey(r.conversationId, r.messageId), r);
  const fused = fuseRankings(outputs.map(({ route, out }) => ({ route, ids: out.refs.map((r) => messageKey(r.conversationId, r.messageId)) })), EXCHANGE_RRF_K);
  const keys = new Set(fused.slice(0, n).map((f) => f.id));
  const timed = outputs.find((o) => o.route === ExchangeRoute.time)?.out.refs ?? [];
  for (const r of timed.slice(0, n)) keys.add(messageKey(r.conversationId, r.messageId));
  return [...keys].map((k) => byKey.get(k)!);
}

/**
 * The answering routes' rankings over lines, and the lines they can show (the shortlisted messages
 * and their neighbours). A pair vector does not say which of its two lines matched, so a pair hit
 * ranks both; episode routes name sessions, not lines, and rank nothing here.
 */
function lineRankings(
  outputs: readonly { route: ExchangeRoute; out: RouteOutput }[],
  neighbourhoods: readonly { anchor: StoredLine; previous?: StoredLine; next?: StoredLine }[],
  exchanges: ReadonlyMap<string, ExchangeCandidate>,
): { rankings: RouteRanking[]; lines: Map<string, StoredLine> } {
  const lines = new Map<string, StoredLine>();
  for (const n of neighbourhoods) for (const l of [n.anchor, n.previous, n.next]) if (l) lines.set(messageKey(l.conversationId, l.messageId), l);
  const partners = new Map<string, string[]>();
  for (const x of exchanges.values()) {
    const keys = [x.user, x.assistant].flatMap((l) => (l ? [messageKey(l.conversationId, l.messageId)] : []));
    for (const k of keys) partners.set(k, keys);
  }
  const rankings = outputs
    .filter(({ out }) => !out.sessions)
    .map(({ route, out }) => ({
      route,
      ids: out.refs.flatMap((r) => {
        const key = messageKey(r.conversationId, r.messageId);
        return out.pairs ? (partners.get(key) ?? [key]) : [key];
      }),
    }));
  return { rankings, lines };
}

/** Fewest distinct query terms a fallback exchange must contain to count as evidence. */
export function minMatchedTerms(distinctQueryTerms: number): number {
  return distinctQueryTerms <= 2 ? distinctQueryTerms : Math.max(2, Math.ceil(distinctQueryTerms / 2));
}

/**
 * Finds the past exchanges (a user line with the assistant's reply) that answer a query: BM25
 * over raw messages ∥ exchanges by their pair vector ∥ lines by their own vector ∥ messages said
 * on the dates the query names — the answering routes — fused with RRF; episodes found by
 * keywords, date and vector then boost the exchanges those routes found inside their sessions
 * (see episodeBoosts). Found messages are paired with their neighbours, cleared of what must stay
 * hidden, and ordered with the named dates first; with `maxLines`, the same routes are fused over
 * lines instead and the best lines fill the budget (rankLines). Route failures are reported, never thrown: the other
 * routes still answer.
 */
export async function searchExchanges(deps: ExchangeSearchDeps, userId: string, input: ExchangeSearchInput): Promise<ExchangeSearchResult> {
  const settled = await runRoutes(plan(deps, userId, input), { deadline: input.deadline, hits: (out) => out.hits ?? out.refs.length });
  const { report: routes, failures } = settled;
  const outputs: { route: ExchangeRoute; out: RouteOutput }[] = settled.results.map(({ route, value }) => ({ route, out: value }));

  const minTerms = input.mode === 'weak' ? minMatchedTerms(new Set(input.tokens).size) : 0;
  if (minTerms > 0) {
    // Evidence must come from a line itself; without any such line there is nothing to pair.
    // Sessions are no evidence either: a weak fallback is never boosted by its episode.
    for (const o of outputs) if (!o.out.evidence) o.out = { refs: (o.out.matched ?? []).filter((h) => h.matched.length >= minTerms), matched: o.out.matched, hits: o.out.hits };
  }
  // A line budget shortlists as many messages per line as `limit` does per exchange: only lines
  // hydrated here can be ranked, and a shorter list left the line ranking short of its budget.
  const perExchange = input.maxLines !== undefined ? input.maxLines : input.limit;
  const refs = shortlist(outputs, perExchange);
  if (refs.length === 0) return { exchanges: [], routes, failures };

  try {
    const neighbourhoods = await withDeadline(
      deps.messageSearch.withNeighbours({ userId, refs, staleSources: input.mode === 'weak', now: input.now }),
      input.deadline + 500,
    );
    const exchanges = new Map<string, ExchangeCandidate>();
    const exchangeOf = new Map<string, string>();
    const hidden = new Set<string>();
    // A line that asks is answered by the line after it (the assistant's question, the user's
    // reply), which the pair index never keys together: a budget counted in lines shows it
    // after the question (LoCoMo dev, 10 lines: 0.667 → 0.713).
    const answers = new Map<string, StoredLine>();
    for (const n of neighbourhoods) {
      if (input.maxLines !== undefined && n.next && n.next.conversationId === n.anchor.conversationId && !n.next.hidden && asksQuestion(n.anchor.content)) {
        answers.set(messageKey(n.anchor.conversationId, n.anchor.messageId), n.next);
      }
      const x = pairExchange(n.anchor, n.previous, n.next);
      exchanges.set(x.key, x);
      exchangeOf.set(messageKey(n.anchor.conversationId, n.anchor.messageId), x.key);
      for (const l of [n.anchor, n.previous, n.next]) if (l?.hidden) hidden.add(messageKey(l.conversationId, l.messageId));
    }

    if (input.maxLines !== undefined) {
      // Episode routes name sessions, and boosting the lines found inside them cost the daily-chat
      // dev half a question at 5 and at 10 lines (71.4% → 68.6%, 94.3% → 91.4%); LoCoMo's bench
      // has no episodes without extraction. So a line budget ranks the answering routes alone.
      const boostSets = outputs.flatMap(({ route, out }) => (out.graphSet && out.sessions ? [{ route, messageKeys: out.sessions }] : []));
      const { rankings, lines } = lineRankings(outputs, neighbourhoods, exchanges);
      // A question about one speaker of a transcript: the questions that speaker asked the other
      // side rank nothing (they and the answers they bring are about the other side), and what
      // that speaker told is vouched for (LoCoMo dev, 10 lines: 0.727 → 0.740 each alone, 0.753
      // together; multi-hop 6 → 9 of 32). A question about both people of a dialogue vouches for
      // each one's lines apart (LoCoMo's added dev conversations: 519 → 522 of 810, multi-hop 32 → 33).
      const focus = input.query ? speakerFocus(input.query, lines) : undefined;
      const answering = focus ? rankings.map((r) => ({ ...r, ids: r.ids.filter((id) => !focus.onlyAsks.has(id)) })) : rankings;
      const ranked = rankLines({
        rankings: answering,
        lines,
        boostSets: focus ? [...boostSets, ...focus.tells.map((messageKeys) => ({ route: ExchangeRoute.speaker, messageKeys }))] : boostSets,
        boostsPerSet: VOUCHED_LINES,
        ranges: input.ranges,
        hidden,
        answers,
        maxLines: input.maxLines,
        rrfK: EXCHANGE_RRF_K,
      });
      return { exchanges: ranked, routes, failures };
    }

    const matchedTerms = new Map<string, Set<string>>();
    for (const { out } of outputs) {
      for (const hit of out.matched ?? []) {
        const key = exchangeOf.get(messageKey(hit.conversationId, hit.messageId));
        if (!key) continue;
        const set = matchedTerms.get(key) ?? new Set<string>();
        for (const term of hit.matched) set.add(term);
        matchedTerms.set(key, set);
      }
    }
    // Exchanges a route vouches for (close enough by vector) pass the words check.
    const vouched = new Set(outputs.flatMap(({ out }) => (out.evidence ? out.refs.flatMap((r) => exchangeOf.get(messageKey(r.conversationId, r.messageId)) ?? []) : [])));
    const answering: RouteRanking[] = outputs
      .filter(({ out }) => !out.sessions)
      .map(({ route, out }) => ({ route, ids: out.refs.flatMap((r) => exchangeOf.get(messageKey(r.conversationId, r.messageId)) ?? []) }));
    const boosts = episodeBoosts({
      answering,
      episodes: outputs.flatMap(({ route, out }) => (out.sessions ? [{ route, messageKeys: out.sessions }] : [])),
      exchanges,
      perRoute: EPISODE_BOOSTS,
      rrfK: EXCHANGE_RRF_K,
    });
    const ranked = rankExchanges({
      rankings: [...answering, ...boosts],
      exchanges,
      ranges: input.ranges,
      hidden,
      ...(minTerms > 0 ? { minMatchedTerms: minTerms, matchedTerms: new Map([...[...matchedTerms].map(([k, v]) => [k, v.size] as const), ...[...vouched].map((k) => [k, minTerms] as const)]) } : {}),
      limit: input.limit,
      rrfK: EXCHANGE_RRF_K,
    });
    return { exchanges: ranked, routes, failures };
  } catch (err) {
    failures.push({ route: 'exchange_hydrate', err });
    return { exchanges: [], routes, failures };
  }
}
