import { describe, expect, it } from 'vitest';
import { RRF_K, fuseRankings } from '../../../src/core/recall/rrf';

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
});
