import { recall } from '../src/recall/recall';
import { rebuildPersona } from '../src/persona/persona';
import { fmt, startBenchStack, stats, timed } from './support';
import { analyzeAfterBulkLoad, BENCH_QUERIES, embeddingPool, loadExchangeVectors, loadUser } from './synthetic';

/**
 * Recall + format latency at 1k, 10k and 100k memories for one user, with 100 other users in the
 * same stores, against real Chroma and PostgreSQL. The floor is a raw Chroma query of the same k
 * on the user's vectors (their own collection), measured interleaved in the same run; the SQL
 * floor is one indexed query on the user's memories. "warm" reuses query embeddings
 * (cache); "cold" embeds every query (the e5 call is part of the chat path then).
 * `--persona` builds the target user's persona (L3 profile) and measures warm recall with and
 * without it, interleaved, so the persona's read is compared under the same load.
 * `--exchanges` also gives the target user as many exchange vectors as memories, so the exchange
 * vector route (run on every recall) searches a collection of that size rather than none, and
 * measures warm recall with that route switched off for ordinary queries (the similarity floors at
 * 1), interleaved with the default, so its cost is compared under the same load.
 */
export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  // Off by default: production never runs ANALYZE by hand (analyzeAfterBulkLoad).
  const analyze = args.includes('--analyze');
  const withPersona = args.includes('--persona');
  const withExchanges = args.includes('--exchanges');
  const sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const others = quick ? 20 : 100;
  const perOther = quick ? 200 : 500;
  const samples = quick ? 100 : 300;
  const bench = await startBenchStack();
  try {
    const { runtime } = bench;
    const pool = await embeddingPool(runtime);
    let t0 = performance.now();
    for (let u = 0; u < others; u++) await loadUser(runtime, pool, `other-${u}`, perOther, u * perOther);
    console.log(`loaded ${others} other users × ${perOther} memories in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const queryVectors = new Map<string, number[]>();
    for (const q of BENCH_QUERIES) queryVectors.set(q, await runtime.deps.embeddings.embedQuery(q));

    const rows: string[] = [];
    for (const n of sizes) {
      const user = `target-${n}`;
      t0 = performance.now();
      await loadUser(runtime, pool, user, n, 1_000_000);
      if (withExchanges) await loadExchangeVectors(runtime, pool, user, n);
      if (analyze) await analyzeAfterBulkLoad(runtime);
      console.log(`loaded ${n} memories${withExchanges ? ` and ${n} exchange vectors` : ''} for ${user} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      const now = new Date();
      const personaBuilt = withPersona ? await rebuildPersona({ ...runtime.deps, personas: runtime.deps.personas! }, { userId: user, now }) : undefined;
      const noPersona = { ...runtime.deps, personas: undefined };
      const noVectorEvidence = { ...runtime.deps, config: { ...runtime.deps.config, recall: { ...runtime.deps.config.recall, exchangeMinSimilarity: { cjk: 1, other: 1 } } } };
      const withoutVector: number[] = [];
      const without: number[] = [];
      const personaRead: number[] = [];
      for (let i = 0; i < 20; i++) await recall(runtime.deps, user, BENCH_QUERIES[i % BENCH_QUERIES.length]!, { now }); // warm-up
      const warm: number[] = [];
      const perRoute = new Map<string, number[]>();
      const floor: number[] = [];
      const sqlFloor: number[] = [];
      for (let i = 0; i < samples; i++) {
        const q = BENCH_QUERIES[i % BENCH_QUERIES.length]!;
        const [, f] = await timed(() => runtime.deps.vectors.query({ userId: user, embedding: queryVectors.get(q)!, k: 20 }));
        floor.push(f);
        const [, s] = await timed(() => runtime.deps.pool.query('SELECT id FROM memories WHERE user_id = $1 AND status = $2 ORDER BY importance DESC LIMIT 20', [user, 'active']));
        sqlFloor.push(s);
        const [r, w] = await timed(() => recall(runtime.deps, user, q, { now }));
        if (r.error) throw new Error(`recall degraded during the benchmark: ${r.error.message}`);
        warm.push(w);
        if (withPersona) {
          const [r0, w0] = await timed(() => recall(noPersona, user, q, { now }));
          if (!r.context.system.includes('\n- ') || r0.context.system.includes('\n- ')) throw new Error('the persona A/B is not what it should be');
          without.push(w0);
          personaRead.push((await timed(() => runtime.deps.personas!.forRecall({ userId: user, now })))[1]);
        }
        if (withExchanges) withoutVector.push((await timed(() => recall(noVectorEvidence, user, q, { now })))[1]);
        for (const route of r.routes) perRoute.set(route.route, [...(perRoute.get(route.route) ?? []), route.ms]);
      }
      // A text not seen before at any size, so the embedder's query cache cannot answer it.
      const cold: number[] = [];
      for (let i = 0; i < Math.min(60, samples); i++) {
        const [, c] = await timed(() => recall(runtime.deps, user, `${BENCH_QUERIES[i % BENCH_QUERIES.length]} ${n}-${i}`, { now }));
        cold.push(c);
      }
      const W = stats(warm);
      const F = stats(floor);
      const S = stats(sqlFloor);
      const C = stats(cold);
      rows.push(
        `${String(n).padStart(7)} | warm p50 ${fmt(W.p50)} p95 ${fmt(W.p95)} p99 ${fmt(W.p99)} | cold p50 ${fmt(C.p50)} p95 ${fmt(C.p95)} | chroma floor p50 ${fmt(F.p50)} p95 ${fmt(F.p95)} | sql floor p50 ${fmt(S.p50)} | warm/chroma p50 ×${(W.p50 / F.p50).toFixed(2)} p95 ×${(W.p95 / F.p95).toFixed(2)}`,
      );
      console.log(rows.at(-1));
      if (withPersona) {
        const P = stats(without);
        const R = stats(personaRead);
        console.log(
          `        persona (${personaBuilt?.lines} lines, ${personaBuilt?.tokens} tokens): with p50 ${fmt(W.p50)} p95 ${fmt(W.p95)} | without p50 ${fmt(P.p50)} p95 ${fmt(P.p95)} (interleaved) | its read alone p50 ${fmt(R.p50)} p95 ${fmt(R.p95)}`,
        );
      }
      if (withExchanges) {
        const V = stats(withoutVector);
        console.log(`        exchange vector evidence: on p50 ${fmt(W.p50)} p95 ${fmt(W.p95)} | off p50 ${fmt(V.p50)} p95 ${fmt(V.p95)} (interleaved) | off/chroma p50 ×${(V.p50 / F.p50).toFixed(2)} p95 ×${(V.p95 / F.p95).toFixed(2)}`);
      }
      console.log(`        routes p50/p95: ${[...perRoute].map(([name, ms]) => `${name} ${fmt(stats(ms).p50)}/${fmt(stats(ms).p95)}`).join(', ')}`);
    }
    console.log('\nrecall + format latency (one user, others present; k = 20 per route)');
    for (const r of rows) console.log(r);
  } finally {
    await bench.stop();
  }
}
