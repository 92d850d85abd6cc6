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

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!;
  return s;
}

/**
 * Per class, the mean cosine of `vector` to its `k` nearest labelled vectors of that class
 * (`vectors` unit length, in the order of `labelled`). Shared by every prototype classifier.
 */
export function classMeans<C extends string>(vector: readonly number[], labelled: readonly { cls: C }[], vectors: readonly Float64Array[], k: number): Map<C, number> {
  const v = unit(vector);
  const sims = new Map<C, number[]>();
  labelled.forEach((p, i) => {
    const list = sims.get(p.cls) ?? [];
    list.push(dot(v, vectors[i]!));
    sims.set(p.cls, list);
  });
  const out = new Map<C, number>();
  for (const [cls, list] of sims) {
    list.sort((a, b) => b - a);
    const top = list.slice(0, Math.max(1, k));
    out.set(cls, top.reduce((s, x) => s + x, 0) / top.length);
  }
  return out;
}
