import type { Collection } from 'chromadb';
import { chromaClient } from '../src/adapters/chroma/user-collections';
import { fmt, startBenchStack, stats, timed } from './support';

/**
 * Why vectors live in one Chroma collection per user: the same k-NN query against
 *   (a) one collection shared by all users, filtered with `where: {user_id}` (the old layout),
 *   (b) a collection holding only the user's vectors, unfiltered (the layout in use),
 *   (c) that collection, with the redundant `where` filter,
 * for a user with N vectors among 50 others with 1,000 each. Random unit vectors: only the
 * filtering and search costs matter here, not the neighbours found.
 */
export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const samples = quick ? 100 : 200;
  const bench = await startBenchStack();
  const client = chromaClient(bench.stack.chromaUrl);
  const names: string[] = [];
  let seed = 1;
  const random = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 4294967296 - 0.5;
  };
  const vector = () => {
    const v = Array.from({ length: 384 }, random);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
  const collection = async (name: string) => {
    names.push(name);
    return client.getOrCreateCollection({ name, embeddingFunction: null, configuration: { hnsw: { space: 'cosine' } } });
  };
  const load = async (c: Collection, userId: string, n: number, tag: string) => {
    for (let start = 0; start < n; start += 1000) {
      const m = Math.min(1000, n - start);
      await c.add({
        ids: Array.from({ length: m }, (_, i) => `${tag}-${start + i}`),
        embeddings: Array.from({ length: m }, vector),
        metadatas: Array.from({ length: m }, () => ({ user_id: userId, type: 'fact' })),
      });
    }
  };
  try {
    const rows: string[] = [];
    for (const n of sizes) {
      const shared = await collection(`layout_shared_${n}`);
      const own = await collection(`layout_own_${n}`);
      const t0 = performance.now();
      await load(shared, 'target', n, 't');
      for (let u = 0; u < 50; u++) await load(shared, `other-${u}`, 1000, `o${u}`);
      await load(own, 'target', n, 't');
      console.log(`loaded N = ${n} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      const queries = Array.from({ length: 20 }, vector);
      const measure = async (fn: (q: number[]) => Promise<unknown>) => {
        for (let i = 0; i < 10; i++) await fn(queries[i % queries.length]!);
        const xs: number[] = [];
        for (let i = 0; i < samples; i++) xs.push((await timed(() => fn(queries[i % queries.length]!)))[1]);
        return stats(xs);
      };
      const a = await measure((q) => shared.query({ queryEmbeddings: [q], nResults: 20, where: { user_id: 'target' }, include: ['distances'] }));
      const b = await measure((q) => own.query({ queryEmbeddings: [q], nResults: 20, include: ['distances', 'metadatas'] }));
      const c = await measure((q) => own.query({ queryEmbeddings: [q], nResults: 20, where: { user_id: 'target' }, include: ['distances'] }));
      rows.push(
        `${String(n).padStart(7)} | shared + where p50 ${fmt(a.p50)} p95 ${fmt(a.p95)} | own collection p50 ${fmt(b.p50)} p95 ${fmt(b.p95)} | own + where p50 ${fmt(c.p50)} p95 ${fmt(c.p95)} | shared/own p50 ×${(a.p50 / b.p50).toFixed(1)}`,
      );
      console.log(rows.at(-1));
    }
    console.log('\nChroma k-NN (k = 20) by collection layout, one user with N vectors, 50 others with 1,000');
    for (const r of rows) console.log(r);
  } finally {
    for (const name of names) await client.deleteCollection({ name }).catch(() => {});
    await bench.stop();
  }
}
