import { randomBytes } from 'node:crypto';
import { recall } from '../src/recall/recall';
import { ensureDatabase } from '../src/stack/local-postgres';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import { fmt, startBenchStack, stats, timed } from './support';
import { analyzeAfterBulkLoad, BENCH_QUERIES, embeddingPool, loadUser } from './synthetic';

/**
 * A user whose rows were never analyzed against its analyzed twin (issue #22): the same 5k
 * memories, one loaded before ANALYZE and one after, with autovacuum off on the BM25 tables so
 * nothing analyses the second behind the run's back. Memory BM25 alone and whole warm recall are
 * measured interleaved; the ratio fresh/analyzed is the figure (Done-when: within 1.5×). Before
 * the df tables (migration 1796700000000) the fresh user's BM25 could take seconds per query.
 * Against the shared stack (DATABASE_URL set) it works in a database of its own.
 */
export async function run(args: string[]): Promise<void> {
  const n = 5_000;
  const samples = args.includes('--quick') ? 60 : 200;
  const overrides: Record<string, string> = {};
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    const name = `bench_fresh_${randomBytes(3).toString('hex')}`;
    const admin = new URL(url);
    admin.pathname = '/postgres';
    await ensureDatabase(admin.toString(), name);
    url.pathname = `/${name}`;
    overrides.DATABASE_URL = url.toString();
  }
  const bench = await startBenchStack(overrides);
  try {
    const { runtime } = bench;
    const db = runtime.pool;
    for (const table of ['memories', 'memory_terms', 'memory_term_df', 'user_index_stats']) await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    const pool = await embeddingPool(runtime);
    for (let u = 0; u < 10; u++) await loadUser(runtime, pool, `other-${u}`, 500, u * 500);
    await loadUser(runtime, pool, 'twin-analyzed', n, 1_000_000);
    await analyzeAfterBulkLoad(runtime);
    await loadUser(runtime, pool, 'twin-fresh', n, 1_000_000);
    const now = new Date();
    const users = ['twin-analyzed', 'twin-fresh'] as const;
    for (const user of users) for (let i = 0; i < 10; i++) await recall(runtime.deps, user, BENCH_QUERIES[i % BENCH_QUERIES.length]!, { now });
    const bm25 = { 'twin-analyzed': [] as number[], 'twin-fresh': [] as number[] };
    const whole = { 'twin-analyzed': [] as number[], 'twin-fresh': [] as number[] };
    for (let i = 0; i < samples; i++) {
      const q = BENCH_QUERIES[i % BENCH_QUERIES.length]!;
      for (const user of i % 2 === 0 ? users : [...users].reverse()) {
        bm25[user].push((await timed(() => runtime.deps.memories.bm25({ userId: user, tokens: tokenizeForIndex(q), k: 20 })))[1]);
        const [r, ms] = await timed(() => recall(runtime.deps, user, q, { now }));
        if (r.error) throw new Error(`recall degraded during the benchmark: ${r.error.message}`);
        whole[user].push(ms);
      }
    }
    console.log(`\nnever-analyzed user vs analyzed twin (${n} memories each, 10 other users × 500; ${samples} interleaved samples)`);
    for (const [label, m] of [['memory bm25', bm25], ['warm recall', whole]] as const) {
      const A = stats(m['twin-analyzed']);
      const F = stats(m['twin-fresh']);
      console.log(`${label.padEnd(12)} | analyzed p50 ${fmt(A.p50)} p95 ${fmt(A.p95)} | fresh p50 ${fmt(F.p50)} p95 ${fmt(F.p95)} | fresh/analyzed p50 ×${(F.p50 / A.p50).toFixed(2)} p95 ×${(F.p95 / A.p95).toFixed(2)}`);
    }
  } finally {
    await bench.stop();
  }
}
