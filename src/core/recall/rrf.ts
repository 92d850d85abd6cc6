/**
 * Reciprocal Rank Fusion: merges the ranked id lists of several recall routes (ANN, BM25,
 * recency …) by rank rather than by raw score, because the routes' scores live on unrelated
 * scales (cosine 0..1 vs BM25 10+). score(id) = Σ_routes 1 / (k + rank), rank 1-based.
 */

/** The usual RRF constant; it damps the advantage of the very top ranks. */
export const RRF_K = 60;

/** One route's result list, best first. */
export interface RouteRanking {
  route: string;
  ids: readonly string[];
}

/** One fused candidate. */
export interface FusedCandidate {
  id: string;
  score: number;
  /** Routes that returned the id, in the order the rankings were given, without repeats. */
  routes: string[];
  /** Best (lowest) 1-based rank per route. */
  ranks: Record<string, number>;
}

interface Accumulator {
  id: string;
  /** How many rankings listed the id; the first two contributions, and the rest past them. */
  listings: number;
  first: number;
  second: number;
  more: number[] | undefined;
  routes: string[];
  ranks: Record<string, number>;
  bestRank: number;
  /** The last ranking that listed the id: a second listing in the same ranking counts not. */
  listedIn: number;
  score: number;
}

/**
 * Fuses rankings with RRF. An id listed twice in one ranking counts once, at its best rank.
 * Two rankings may share a route name (e.g. ANN run for two rewritten queries); both
 * contribute. Sorted by score descending; ties broken by number of routes (agreement),
 * then best rank, then id in code-unit order, so the result does not depend on Map order.
 *
 * Runs on every recall over a dozen rankings: a Set per ranking to find repeats and a wrapper per
 * candidate to sort were most of what it allocated, so an accumulator remembers the last ranking
 * that listed it and carries its own score.
 *
 * @throws RangeError when k is negative or not finite.
 */
export function fuseRankings(rankings: readonly RouteRanking[], k: number = RRF_K): FusedCandidate[] {
  if (!Number.isFinite(k) || k < 0) throw new RangeError(`RRF k must be a finite number >= 0, got ${k}`);
  const byId = new Map<string, Accumulator>();
  for (let r = 0; r < rankings.length; r++) {
    const { route, ids } = rankings[r]!;
    for (let index = 0; index < ids.length; index++) {
      const id = ids[index]!;
      const rank = index + 1;
      const contribution = 1 / (k + rank);
      const acc = byId.get(id);
      if (!acc) {
        // Most ids are listed by one route: arrays of exactly what they hold, no growth on a push.
        const ranks: Record<string, number> = {};
        ranks[route] = rank;
        byId.set(id, { id, listings: 1, first: contribution, second: 0, more: undefined, routes: [route], ranks, bestRank: rank, listedIn: r, score: 0 });
        continue;
      }
      // Listed again in this ranking: its first (best) rank already counted.
      if (acc.listedIn === r) continue;
      acc.listedIn = r;
      if (acc.listings === 1) acc.second = contribution;
      else (acc.more ??= []).push(contribution);
      acc.listings++;
      if (!acc.routes.includes(route)) acc.routes = acc.routes.concat(route);
      const previous = acc.ranks[route];
      if (previous === undefined || rank < previous) acc.ranks[route] = rank;
      acc.bestRank = Math.min(acc.bestRank, rank);
    }
  }
  const fused = [...byId.values()];
  for (const acc of fused) {
    // Summing in a fixed (ascending) order makes equal multisets of ranks produce bit-identical
    // scores whatever the route order, so true ties stay ties and the tie-break decides. Two
    // terms need no sort: floating-point addition is commutative, only not associative.
    if (acc.listings === 1) acc.score = acc.first;
    else if (acc.listings === 2) acc.score = acc.first + acc.second;
    else {
      const contributions = [acc.first, acc.second, ...acc.more!].sort((x, y) => x - y);
      let score = 0;
      for (const c of contributions) score += c;
      acc.score = score;
    }
  }
  fused.sort(
    (x, y) =>
      y.score - x.score ||
      y.routes.length - x.routes.length ||
      x.bestRank - y.bestRank ||
      (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
  );
  return fused.map((acc) => ({ id: acc.id, score: acc.score, routes: acc.routes, ranks: acc.ranks }));
}
