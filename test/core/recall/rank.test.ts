import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_RESULTS,
  DEPRIORITIZE_FACTOR,
  TYPE_WEIGHTS,
  importanceWeight,
  IMPORTANCE_WEIGHT_FLOOR,
  rankMemories,
  type RankableMemory,
} from '../../../src/core/recall/rank';
import { fuseRankings } from '../../../src/core/recall/rrf';
import type { ImportanceLevel, MemoryType } from '../../../src/core/types';
import { mulberry32 } from '../../support/prng';

const NOW = new Date('2026-09-01T00:00:00Z');
const DAY = 86_400_000;

function mem(id: string, over: Partial<RankableMemory> = {}): RankableMemory {
  return {
    id,
    type: 'fact',
    status: 'active',
    importance: 0.5,
    importanceLevel: 'medium' satisfies ImportanceLevel,
    lastAccessedAt: NOW,
    expiresAt: null,
    ...over,
  };
}

describe('constants', () => {
  it('orders types pain_point > goal > preference = decision > fact = assistant_contribution > event', () => {
    const w = TYPE_WEIGHTS;
    expect(w.pain_point).toBeGreaterThan(w.goal);
    expect(w.goal).toBeGreaterThan(w.preference);
    expect(w.preference).toBe(w.decision);
    expect(w.preference).toBeGreaterThan(w.fact);
    expect(w.fact).toBe(w.assistant_contribution);
    expect(w.fact).toBeGreaterThan(w.event);
    expect(w.instruction).toBe(1);
  });

  it('importance weight ranges from the floor to 1', () => {
    expect(importanceWeight(0)).toBe(IMPORTANCE_WEIGHT_FLOOR);
    expect(importanceWeight(1)).toBe(1);
    expect(importanceWeight(2)).toBe(1);
    expect(importanceWeight(Number.NaN)).toBe(IMPORTANCE_WEIGHT_FLOOR);
  });
});

describe('rankMemories', () => {
  it('multiplies relevance × decay × importance weight × type weight', () => {
    const memory = mem('a', { type: 'goal', importance: 0.8, lastAccessedAt: new Date(NOW.getTime() - 10 * DAY) });
    const [r] = rankMemories([{ memory, relevance: 0.03 }], { now: NOW });
    const decay = Math.exp((-10 * Math.LN2) / 30);
    expect(r?.decay).toBeCloseTo(decay, 12);
    expect(r?.score).toBeCloseTo(0.03 * decay * importanceWeight(0.8) * TYPE_WEIGHTS.goal, 12);
    expect(r?.deprioritized).toBe(false);
  });

  it('deprioritises memories whose decay is below 0.5', () => {
    const stale = mem('stale', { lastAccessedAt: new Date(NOW.getTime() - 40 * DAY) }); // medium: 0.397
    const [r] = rankMemories([{ memory: stale, relevance: 1 }], { now: NOW });
    expect(r?.deprioritized).toBe(true);
    expect(r?.score).toBeCloseTo(r!.decay * importanceWeight(0.5) * TYPE_WEIGHTS.fact * DEPRIORITIZE_FACTOR, 12);
  });

  it('never returns archived-level decay, inactive or expired memories', () => {
    const ranked = rankMemories(
      [
        { memory: mem('archived', { lastAccessedAt: new Date(NOW.getTime() - 80 * DAY) }), relevance: 1 }, // 0.157
        { memory: mem('superseded', { status: 'superseded' }), relevance: 1 },
        { memory: mem('expired', { expiresAt: new Date(NOW.getTime() - 1) }), relevance: 1 },
        { memory: mem('expiring-later', { expiresAt: new Date(NOW.getTime() + DAY) }), relevance: 1 },
        { memory: mem('ok'), relevance: 0.5 },
      ],
      { now: NOW },
    );
    expect(ranked.map((r) => r.memory.id)).toEqual(['expiring-later', 'ok']);
  });

  it('puts pain_point and goal before fact when relevance is comparable', () => {
    const memories = new Map<string, RankableMemory>([
      ['f', mem('f', { type: 'fact' })],
      ['p', mem('p', { type: 'pain_point' })],
      ['g', mem('g', { type: 'goal' })],
      ['e', mem('e', { type: 'event' })],
    ]);
    // The fact is the best semantic hit; the others are right behind it.
    const fused = fuseRankings([{ route: 'ann', ids: ['f', 'e', 'p', 'g'] }]);
    const ranked = rankMemories(
      fused.map((f) => ({ memory: memories.get(f.id)!, relevance: f.score })),
      { now: NOW },
    );
    expect(ranked.map((r) => r.memory.id)).toEqual(['p', 'g', 'f', 'e']);
  });

  it('still lets a much more relevant fact win', () => {
    const memories = new Map<string, RankableMemory>([
      ['f', mem('f', { type: 'fact' })],
      ['p', mem('p', { type: 'pain_point' })],
    ]);
    const fused = fuseRankings([
      { route: 'ann', ids: ['f', 'p'] },
      { route: 'bm25', ids: ['f'] },
    ]);
    const ranked = rankMemories(fused.map((f) => ({ memory: memories.get(f.id)!, relevance: f.score })), { now: NOW });
    expect(ranked[0]?.memory.id).toBe('f');
  });

  it('orders by importance at equal relevance and type', () => {
    const ranked = rankMemories(
      [
        { memory: mem('low', { importance: 0.2 }), relevance: 0.02 },
        { memory: mem('high', { importance: 0.9, importanceLevel: 'high' }), relevance: 0.02 },
        { memory: mem('mid', { importance: 0.5 }), relevance: 0.02 },
      ],
      { now: NOW },
    );
    expect(ranked.map((r) => r.memory.id)).toEqual(['high', 'mid', 'low']);
  });

  it('applies scoreThreshold and maxResults', () => {
    const candidates = Array.from({ length: 12 }, (_, i) => ({ memory: mem(`m${String(i).padStart(2, '0')}`), relevance: 1 / (61 + i) }));
    expect(rankMemories(candidates, { now: NOW })).toHaveLength(DEFAULT_MAX_RESULTS);
    expect(rankMemories(candidates, { now: NOW, maxResults: 3 }).map((r) => r.memory.id)).toEqual(['m00', 'm01', 'm02']);
    const threshold = importanceWeight(0.5) * TYPE_WEIGHTS.fact * ((1 / 63 + 1 / 64) / 2); // between the 3rd and 4th score
    const above = rankMemories(candidates, { now: NOW, maxResults: 100, scoreThreshold: threshold });
    expect(above.map((r) => r.memory.id)).toEqual(['m00', 'm01', 'm02']);
    expect(rankMemories(candidates, { now: NOW, maxResults: 0 })).toEqual([]);
  });

  it('keeps the best relevance of a duplicated id and breaks ties by id', () => {
    const ranked = rankMemories(
      [
        { memory: mem('b'), relevance: 0.01 },
        { memory: mem('a'), relevance: 0.01 },
        { memory: mem('b'), relevance: 0.02 },
      ],
      { now: NOW },
    );
    expect(ranked.map((r) => [r.memory.id, r.relevance])).toEqual([
      ['b', 0.02],
      ['a', 0.01],
    ]);
    const tie = rankMemories(
      [
        { memory: mem('y'), relevance: 0.01 },
        { memory: mem('x'), relevance: 0.01 },
      ],
      { now: NOW },
    );
    expect(tie.map((r) => r.memory.id)).toEqual(['x', 'y']);
  });

  it('keeps exactly the first maxResults of the whole ranking, over random candidates with ties', () => {
    // rankMemories keeps the best k as they come instead of sorting every candidate: it must be
    // the prefix of the plain sort, ties in score and importance and repeated ids included.
    const random = mulberry32(20261205);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const types = Object.keys(TYPE_WEIGHTS) as MemoryType[];
    const levels: ImportanceLevel[] = ['low', 'medium', 'high', 'critical'];
    for (let round = 0; round < 500; round++) {
      const candidates = Array.from({ length: Math.floor(random() * 60) }, () => ({
        memory: mem(`m${Math.floor(random() * 40)}`, {
          type: pick(types),
          importance: pick([0, 0.3, 0.5, 0.5, 0.9, 1]),
          importanceLevel: pick(levels),
          lastAccessedAt: new Date(NOW.getTime() - pick([0, 0, 3, 30, 90, 400]) * DAY),
          status: random() < 0.1 ? 'archived' : 'active',
        }),
        relevance: pick([0, 1 / 61, 1 / 61, 1 / 62, 2 / 61, 1 / 80, 0.5]),
      }));
      const whole = rankMemories(candidates, { now: NOW, maxResults: Number.MAX_SAFE_INTEGER });
      const sorted = [...whole].sort(
        (a, b) => b.score - a.score || b.memory.importance - a.memory.importance || (a.memory.id < b.memory.id ? -1 : a.memory.id > b.memory.id ? 1 : 0),
      );
      expect(whole).toEqual(sorted);
      for (const maxResults of [0, 1, 3, 8, 20, Number.NaN]) expect(rankMemories(candidates, { now: NOW, maxResults })).toEqual(sorted.slice(0, maxResults));
    }
  });

  it('ranks every memory type', () => {
    const types = Object.keys(TYPE_WEIGHTS) as MemoryType[];
    const ranked = rankMemories(types.map((type) => ({ memory: mem(type, { type }), relevance: 0.01 })), { now: NOW, maxResults: 20 });
    expect(ranked).toHaveLength(types.length);
    expect(ranked.at(-1)?.memory.type).toBe('event');
  });
});
