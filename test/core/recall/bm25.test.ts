import { describe, expect, it } from 'vitest';
import { BM25_B, BM25_K1, bm25AvgDocLength, bm25Document, bm25Idf, bm25Score } from '../../../src/core/recall/bm25';

describe('bm25Idf', () => {
  it('uses the non-negative Lucene form', () => {
    expect(bm25Idf(1, 10)).toBeCloseTo(Math.log(1 + 9.5 / 1.5), 12);
    // A term in every document still has a small positive idf, never negative.
    expect(bm25Idf(10, 10)).toBeGreaterThan(0);
    expect(bm25Idf(10, 10)).toBeCloseTo(Math.log(1 + 0.5 / 10.5), 12);
  });

  it('decreases as the term becomes more common', () => {
    expect(bm25Idf(1, 100)).toBeGreaterThan(bm25Idf(10, 100));
    expect(bm25Idf(10, 100)).toBeGreaterThan(bm25Idf(90, 100));
  });

  it('clamps document frequency into [0, docCount]', () => {
    expect(bm25Idf(-3, 10)).toBe(bm25Idf(0, 10));
    expect(bm25Idf(50, 10)).toBe(bm25Idf(10, 10));
  });
});

describe('bm25Score', () => {
  const base = { tf: 2, docLength: 10, avgDocLength: 8, docFrequency: 3, docCount: 50 };

  it('matches the textbook formula with k1 = 1.2, b = 0.75', () => {
    expect(BM25_K1).toBe(1.2);
    expect(BM25_B).toBe(0.75);
    const idf = Math.log(1 + (50 - 3 + 0.5) / (3 + 0.5));
    const expected = (idf * (2 * 2.2)) / (2 + 1.2 * (1 - 0.75 + 0.75 * (10 / 8)));
    expect(bm25Score(base)).toBeCloseTo(expected, 12);
  });

  it('is 0 for an absent term or empty collection', () => {
    expect(bm25Score({ ...base, tf: 0 })).toBe(0);
    expect(bm25Score({ ...base, docCount: 0 })).toBe(0);
  });

  it('saturates in tf and penalises long documents', () => {
    const s1 = bm25Score({ ...base, tf: 1 });
    const s2 = bm25Score({ ...base, tf: 2 });
    const s20 = bm25Score({ ...base, tf: 20 });
    expect(s2).toBeGreaterThan(s1);
    expect(s20).toBeGreaterThan(s2);
    // Bounded by idf·(k1 + 1) however often the term repeats.
    expect(s20).toBeLessThan(bm25Idf(base.docFrequency, base.docCount) * (BM25_K1 + 1));
    // Diminishing returns: each extra occurrence adds less.
    expect(bm25Score({ ...base, tf: 3 }) - s2).toBeLessThan(s2 - s1);
    expect(bm25Score({ ...base, docLength: 40 })).toBeLessThan(bm25Score({ ...base, docLength: 5 }));
  });

  it('treats a zero average length as average documents', () => {
    expect(Number.isFinite(bm25Score({ ...base, avgDocLength: 0 }))).toBe(true);
    expect(bm25Score({ ...base, avgDocLength: 0 })).toBeCloseTo(bm25Score({ ...base, docLength: 8 }), 12);
  });

  it('accepts custom parameters', () => {
    // b = 0 ignores length entirely.
    expect(bm25Score({ ...base, docLength: 100 }, { b: 0 })).toBeCloseTo(bm25Score({ ...base, docLength: 1 }, { b: 0 }), 12);
  });
});

describe('bm25Document', () => {
  it('sums distinct query terms present in the document', () => {
    const stats = { docCount: 10, avgDocLength: 5, docFrequency: new Map([['花生', 2], ['过敏', 4]]) };
    const doc = new Map([['花生', 1], ['过敏', 1], ['用户', 1]]);
    const expected =
      bm25Score({ tf: 1, docLength: 3, avgDocLength: 5, docFrequency: 2, docCount: 10 }) +
      bm25Score({ tf: 1, docLength: 3, avgDocLength: 5, docFrequency: 4, docCount: 10 });
    expect(bm25Document(['花生', '过敏', '花生', '午餐'], doc, 3, stats)).toBeCloseTo(expected, 12);
    expect(bm25Document(['午餐'], doc, 3, stats)).toBe(0);
  });
});

describe('bm25AvgDocLength', () => {
  it('is the mean length, floored at one token (as the SQL indexes compute it)', () => {
    expect(bm25AvgDocLength(30, 4)).toBe(7.5);
    expect(bm25AvgDocLength(1, 4)).toBe(1);
    expect(bm25AvgDocLength(0, 0)).toBe(1);
  });
});
