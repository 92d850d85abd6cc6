/** Cosine scoring of an embedding against labelled exemplars: every prototype classifier's arithmetic. */

/** `v` scaled to length 1 (a zero vector stays zero). */
export function unit(v: readonly number[]): Float64Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  const out = new Float64Array(v.length);
  if (norm === 0) return out;
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

/** One class's exemplars: their unit vectors end to end, `width` numbers each. */
interface ClassRows {
  rows: Float64Array;
  count: number;
}

/**
 * Labelled unit vectors grouped by class, each class's vectors laid end to end in one array, so a
 * caller can score one class and stop: recall's follow-up check scores every message against the
 * refer-back class first and most messages end there (follow-up.ts).
 */
export class ClassVectors<C extends string> {
  private readonly byClass = new Map<C, ClassRows>();
  /** The length of every exemplar vector. */
  readonly width: number;

  constructor(labelled: readonly { cls: C }[], vectors: readonly Float64Array[]) {
    if (vectors.length !== labelled.length) throw new Error(`class vectors: ${labelled.length} exemplars but ${vectors.length} vectors`);
    this.width = vectors[0]?.length ?? 0;
    const members = new Map<C, Float64Array[]>();
    labelled.forEach((p, i) => {
      const vector = vectors[i]!;
      if (vector.length !== this.width) throw new Error(`class vectors: exemplar ${i} has ${vector.length} numbers, the first has ${this.width}`);
      const list = members.get(p.cls) ?? [];
      list.push(vector);
      members.set(p.cls, list);
    });
    // Classes in the order they first appear, as a Map of the exemplars would hold them.
    for (const [cls, list] of members) {
      const rows = new Float64Array(list.length * this.width);
      list.forEach((v, j) => rows.set(v, j * this.width));
      this.byClass.set(cls, { rows, count: list.length });
    }
  }

  /** The classes, in the order their first exemplar appeared. */
  classes(): IterableIterator<C> {
    return this.byClass.keys();
  }

  /**
   * The mean cosine of unit vector `v` to the `k` nearest exemplars of `cls` (all of them when it
   * has fewer), or undefined when `cls` has none. Numbers beyond the shorter of `v` and an
   * exemplar are left out, as a dot product of unequal vectors would.
   */
  meanOfNearest(v: Float64Array, cls: C, k: number): number | undefined {
    const found = this.byClass.get(cls);
    if (!found) return undefined;
    const { rows, count } = found;
    const width = this.width;
    const n = Math.min(width, v.length);
    // The k best so far, best first: k is a handful, so an insertion beats sorting every score.
    const keep = Math.min(Math.max(1, k), count);
    const best = new Float64Array(keep).fill(-Infinity);
    for (let j = 0; j < count; j++) {
      const offset = j * width;
      const s = dot(v, rows, offset, n);
      if (s <= best[keep - 1]!) continue;
      let at = keep - 1;
      while (at > 0 && best[at - 1]! < s) {
        best[at] = best[at - 1]!;
        at--;
      }
      best[at] = s;
    }
    let sum = 0;
    for (let i = 0; i < keep; i++) sum += best[i]!;
    return sum / keep;
  }
}

/** Per class, the mean cosine of `vector` to its `k` nearest exemplars of that class. Shared by every prototype classifier. */
export function classMeans<C extends string>(vector: readonly number[], classes: ClassVectors<C>, k: number): Map<C, number> {
  const v = unit(vector);
  const out = new Map<C, number>();
  for (const cls of classes.classes()) out.set(cls, classes.meanOfNearest(v, cls, k)!);
  return out;
}

/**
 * The dot product of `v`'s first `n` numbers with `n` of `rows` from `offset`, in four running
 * sums: one sum waits on each addition before the next, four keep the core's adders busy (the
 * follow-up check's cosines took half the time; docs/benchmarks.md).
 */
function dot(v: Float64Array, rows: Float64Array, offset: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    s0 += v[i]! * rows[offset + i]!;
    s1 += v[i + 1]! * rows[offset + i + 1]!;
    s2 += v[i + 2]! * rows[offset + i + 2]!;
    s3 += v[i + 3]! * rows[offset + i + 3]!;
  }
  for (; i < n; i++) s0 += v[i]! * rows[offset + i]!;
  return s0 + s1 + (s2 + s3);
}
