import { describe, expect, it } from 'vitest';
import { RRF_K, fuseRankings, type RouteRanking } from '../../../src/core/recall/rrf';
import { mulberry32 } from '../../support/prng';

describe('fuseRankings', () => {
  it('scores Σ 1/(k + rank) with 1-based ranks and k = 60 by default', () => {
    expect(RRF_K).toBe(60);
    const fused = fuseRankings([
      { route: 'ann', ids: ['a', 'b', 'c'] },
      { route: 'bm25', ids: ['b', 'd'] },
    ]);
    const byId = new Map(fused.map((f) => [f.id, f]));
    expect(byId.get('a')?.score).toBeCloseTo(1 / 61, 15);
    expect(byId.get('b')?.score).toBeCloseTo(1 / 62 + 1 / 61, 15);
    expect(byId.get('c')?.score).toBeCloseTo(1 / 63, 15);
    expect(byId.get('d')?.score).toBeCloseTo(1 / 62, 15);
    expect(fused.map((f) => f.id)).toEqual(['b', 'a', 'd', 'c']);
    expect(byId.get('b')?.routes).toEqual(['ann', 'bm25']);
    expect(byId.get('b')?.ranks).toEqual({ ann: 2, bm25: 1 });
  });

  it('honours a custom k', () => {
    const [top] = fuseRankings([{ route: 'x', ids: ['a'] }], 0);
    expect(top?.score).toBe(1);
    expect(() => fuseRankings([], -1)).toThrow(RangeError);
    expect(() => fuseRankings([], Number.NaN)).toThrow(RangeError);
  });

  it('counts an id once per ranking, at its best rank', () => {
    const [top] = fuseRankings([{ route: 'ann', ids: ['a', 'a', 'b'] }]);
    expect(top?.score).toBeCloseTo(1 / 61, 15);
    expect(fuseRankings([{ route: 'ann', ids: ['a', 'a', 'b'] }]).find((f) => f.id === 'b')?.ranks).toEqual({ ann: 3 });
  });

  it('lets two rankings of the same route both contribute', () => {
    const fused = fuseRankings([
      { route: 'ann', ids: ['a', 'b'] },
      { route: 'ann', ids: ['b'] },
    ]);
    const b = fused.find((f) => f.id === 'b');
    expect(b?.score).toBeCloseTo(1 / 62 + 1 / 61, 15);
    expect(b?.routes).toEqual(['ann']);
    expect(b?.ranks).toEqual({ ann: 1 });
  });

  it('breaks ties deterministically regardless of input order', () => {
    const r1 = fuseRankings([
      { route: 'ann', ids: ['x', 'y'] },
      { route: 'bm25', ids: ['y', 'x'] },
      { route: 'recent', ids: ['z'] },
    ]);
    const r2 = fuseRankings([
      { route: 'recent', ids: ['z'] },
      { route: 'bm25', ids: ['y', 'x'] },
      { route: 'ann', ids: ['x', 'y'] },
    ]);
    // x and y tie exactly (1/61 + 1/62 each): id order decides; z has one route only.
    expect(r1.map((f) => f.id)).toEqual(['x', 'y', 'z']);
    expect(r2.map((f) => f.id)).toEqual(['x', 'y', 'z']);
    expect(r1[0]?.score).toBe(r1[1]?.score);
  });

  it('prefers agreement between routes, then the better rank, on equal score', () => {
    // With k = 0: p ranks (2, 2) → 1/2 + 1/2 = 1; q rank 1 on one route → 1.
    const fused = fuseRankings(
      [
        { route: 'ann', ids: ['q', 'p'] },
        { route: 'bm25', ids: ['r', 'p'] },
      ],
      0,
    );
    expect(fused.map((f) => f.id)).toEqual(['p', 'q', 'r']);
  });

  it('returns [] for no rankings', () => {
    expect(fuseRankings([])).toEqual([]);
    expect(fuseRankings([{ route: 'ann', ids: [] }])).toEqual([]);
  });

  it('fuses as the plain computation does, bit for bit, with repeats, shared route names and ties', () => {
    const random = mulberry32(20261205);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    for (let round = 0; round < 500; round++) {
      const ids = Array.from({ length: 1 + Math.floor(random() * 30) }, (_, i) => `m${i}`);
      const rankings: RouteRanking[] = Array.from({ length: Math.floor(random() * 8) }, () => ({
        route: pick(['ann', 'bm25', 'recent', 'important']),
        ids: Array.from({ length: Math.floor(random() * 25) }, () => pick(ids)),
      }));
      const k = pick([0, 1, 60]);
      expect(fuseRankings(rankings, k)).toEqual(plainFusion(rankings, k));
    }
  });
});

/** RRF written plainly: each ranking's ids once, at their first rank; contributions summed smallest first. */
function plainFusion(rankings: readonly RouteRanking[], k: number): { id: string; score: number; routes: string[]; ranks: Record<string, number> }[] {
  const found = new Map<string, { contributions: number[]; routes: string[]; ranks: Record<string, number>; bestRank: number }>();
  for (const { route, ids } of rankings) {
    const firstRank = new Map<string, number>();
    ids.forEach((id, i) => {
      if (!firstRank.has(id)) firstRank.set(id, i + 1);
    });
    for (const [id, rank] of firstRank) {
      const entry = found.get(id) ?? { contributions: [], routes: [], ranks: {}, bestRank: rank };
      found.set(id, entry);
      entry.contributions.push(1 / (k + rank));
      if (!entry.routes.includes(route)) entry.routes.push(route);
      entry.ranks[route] = Math.min(entry.ranks[route] ?? rank, rank);
      entry.bestRank = Math.min(entry.bestRank, rank);
    }
  }
  const out = [...found].map(([id, e]) => ({ id, e, score: [...e.contributions].sort((a, b) => a - b).reduce((s, c) => s + c, 0) }));
  out.sort((x, y) => y.score - x.score || y.e.routes.length - x.e.routes.length || x.e.bestRank - y.e.bestRank || (x.id < y.id ? -1 : 1));
  return out.map(({ id, e, score }) => ({ id, score, routes: e.routes, ranks: e.ranks }));
}
