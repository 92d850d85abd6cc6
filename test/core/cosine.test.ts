import { describe, expect, it } from 'vitest';
import { classMeans, ClassVectors, unit } from '../../src/core/cosine';
import { followUpByMeaning, followUpPrototypeIndex, isReferBackByMeaning } from '../../src/core/recall/follow-up';
import type { FollowUpClass } from '../../src/core/recall/follow-up-prototypes';
import { mulberry32 } from '../support/prng';

/** The plain computation the grouped one must equal: every cosine, sorted, the k best averaged. */
function plainMeans<C extends string>(vector: readonly number[], labelled: readonly { cls: C }[], vectors: readonly Float64Array[], k: number): Map<C, number> {
  const v = unit(vector);
  const sims = new Map<C, number[]>();
  labelled.forEach((p, i) => {
    // Four running sums, by position modulo 4, added as (0 + 1) + (2 + 3): the order of additions
    // the scorer promises, so its scores and ties can be compared bit for bit.
    const sums = [0, 0, 0, 0];
    const whole = v.length - (v.length % 4);
    for (let j = 0; j < v.length; j++) sums[j < whole ? j % 4 : 0]! += v[j]! * vectors[i]![j]!;
    const s = sums[0]! + sums[1]! + (sums[2]! + sums[3]!);
    let straight = 0;
    for (let j = 0; j < v.length; j++) straight += v[j]! * vectors[i]![j]!;
    expect(Math.abs(s - straight)).toBeLessThan(1e-12);
    sims.set(p.cls, [...(sims.get(p.cls) ?? []), s]);
  });
  const out = new Map<C, number>();
  for (const [cls, list] of sims) {
    const top = list.sort((a, b) => b - a).slice(0, Math.max(1, k));
    out.set(cls, top.reduce((s, x) => s + x, 0) / top.length);
  }
  return out;
}

const CLASSES: readonly FollowUpClass[] = ['refer_back', 'names_thing', 'new_question', 'small_talk', 'statement'];

describe('class vectors', () => {
  it('score each class exactly as sorting every cosine would, classes in the order they first appear', () => {
    const random = mulberry32(20261204);
    for (let round = 0; round < 200; round++) {
      const width = 1 + Math.floor(random() * 24);
      const labelled = Array.from({ length: 1 + Math.floor(random() * 40) }, () => ({ cls: CLASSES[Math.floor(random() * CLASSES.length)]! }));
      const vectors = labelled.map(() => unit(Array.from({ length: width }, () => random() * 2 - 1)));
      const query = Array.from({ length: width }, () => random() * 2 - 1);
      const k = Math.floor(random() * 6);
      const grouped = classMeans(query, new ClassVectors(labelled, vectors), k);
      const plain = plainMeans(query, labelled, vectors, k);
      expect([...grouped.keys()]).toEqual([...plain.keys()]);
      expect([...grouped.values()]).toEqual([...plain.values()]);
    }
  });

  it('have nothing for a class without exemplars, and refuse exemplars of unequal length', () => {
    const classes = new ClassVectors([{ cls: 'a' }], [unit([1, 0])]);
    expect(classes.meanOfNearest(unit([1, 0]), 'b' as 'a', 3)).toBeUndefined();
    expect(() => new ClassVectors([{ cls: 'a' }, { cls: 'b' }], [unit([1, 0]), unit([1, 0, 0])])).toThrow(/numbers/);
    expect(() => new ClassVectors([{ cls: 'a' }], [])).toThrow(/vectors/);
  });
});

describe('the follow-up net stopped at the refer-back class', () => {
  it('answers as the full verdict, on queries near the prototypes and far from them', () => {
    const random = mulberry32(7);
    const width = 16;
    const prototypes = Array.from({ length: 60 }, (_, i) => ({ text: `p${i}`, cls: CLASSES[i % CLASSES.length]! }));
    // Every fifth prototype (a refer-back) starts a family; the negatives near it make margins close.
    const vectors: number[][] = [];
    for (let i = 0; i < prototypes.length; i++) {
      const base = i % CLASSES.length === 0 ? undefined : vectors[i - (i % CLASSES.length)]!;
      vectors.push(Array.from({ length: width }, (_, j) => (base ? base[j]! + (random() * 2 - 1) * 0.6 : random() * 2 - 1)));
    }
    const index = followUpPrototypeIndex(prototypes, vectors);
    let referBacks = 0;
    let stoppedEarly = 0;
    for (let i = 0; i < 2000; i++) {
      // A prototype's vector plus noise of random size: scores spread across the floor and the margin.
      const near = vectors[Math.floor(random() * vectors.length)]!;
      const noise = random() * 0.8;
      const query = near.map((x) => x + (random() * 2 - 1) * noise);
      const t = { k: 1 + Math.floor(random() * 2), margin: random() * 0.1, floor: 0.3 + random() * 0.6 };
      const full = followUpByMeaning(query, index, t);
      expect(isReferBackByMeaning(query, index, t)).toBe(full.referBack);
      if (full.referBack) referBacks++;
      if (full.score < t.floor) stoppedEarly++;
    }
    // Both outcomes, and both ways to reach "no", were exercised.
    expect(referBacks).toBeGreaterThan(50);
    expect(stoppedEarly).toBeGreaterThan(50);
    expect(2000 - referBacks - stoppedEarly).toBeGreaterThan(50);
  });
});
