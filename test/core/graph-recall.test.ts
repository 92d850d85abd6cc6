import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalEntity, interleaveBySeed, matchQueryEntities, queryKinship } from '../../src/core/recall/graph';

interface Pair {
  split: 'dev' | 'heldout';
  a: string;
  b: string;
  same: boolean;
}
const pairs: Pair[] = readFileSync(new URL('../fixtures/entity-aliases/pairs.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim().length > 0)
  .map((l) => JSON.parse(l) as Pair);

function accuracy(split: Pair['split']): { accuracy: number; wrong: Pair[] } {
  const set = pairs.filter((p) => p.split === split);
  const wrong = set.filter((p) => (canonicalEntity(p.a) === canonicalEntity(p.b)) !== p.same);
  return { accuracy: 1 - wrong.length / set.length, wrong };
}

describe('entity normalisation (labelled alias pairs, split dev / held-out)', () => {
  it('gets every dev pair right', () => {
    expect(accuracy('dev').wrong).toEqual([]);
  });
  it('gets at least 90% of the held-out pairs right (the misses are relatives the table does not hold)', () => {
    const held = accuracy('heldout');
    expect(held.accuracy).toBeGreaterThanOrEqual(0.9);
  });
});

describe('query entities', () => {
  it('reads kinship from zh and en queries, single Han characters only after a possessive', () => {
    expect(queryKinship('what do my sister and I both like')).toEqual(new Set(['kin:sister']));
    expect(queryKinship('我妈和我姐周末去哪了')).toEqual(new Set(['kin:mother', 'kin:sister']));
    expect(queryKinship('哥伦比亚咖啡好喝吗')).toEqual(new Set());
    expect(queryKinship('a drama about momentum')).toEqual(new Set());
  });

  it('groups the user\'s entities by node and matches Latin names as whole words', () => {
    const entities = [
      { id: '1', name: '姐姐' },
      { id: '2', name: 'sister' },
      { id: '3', name: 'cat' },
      { id: '4', name: 'Berlin' },
      { id: '5', name: 'user' },
      { id: '6', name: '杭州' },
    ];
    const groups = matchQueryEntities('Did my sister like the education system in Berlin?', entities);
    expect(Object.fromEntries(groups)).toEqual({ 'kin:sister': ['1', '2'], berlin: ['4'] });
    expect([...matchQueryEntities('我去杭州找我的妹妹', entities).keys()].sort()).toEqual(['kin:sister', '杭州']);
  });
});

describe('per-entity combination', () => {
  it('takes each seed\'s nearest memory in turn, nearer hops before farther ones, without repeats', () => {
    const hits = [
      { memoryId: 'a1', seed: 'a', hop: 0 },
      { memoryId: 'a2', seed: 'a', hop: 0 },
      { memoryId: 'a3', seed: 'a', hop: 0 },
      { memoryId: 'ax', seed: 'a', hop: 1 },
      { memoryId: 'b1', seed: 'b', hop: 0 },
      { memoryId: 'a2', seed: 'b', hop: 1 },
      { memoryId: 'bx', seed: 'b', hop: 1 },
    ];
    expect(interleaveBySeed(hits, 10)).toEqual(['a1', 'b1', 'a2', 'a3', 'ax', 'bx']);
    expect(interleaveBySeed(hits, 2)).toEqual(['a1', 'b1']);
  });
});
