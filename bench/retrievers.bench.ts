import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { EnsembleRetriever } from '@langchain/classic/retrievers/ensemble';
import { BM25Retriever } from '@langchain/community/retrievers/bm25';
import { Document } from '@langchain/core/documents';
import { BaseRetriever } from '@langchain/core/retrievers';
import { serveInProcess } from '../src/cli/in-process';
import type { Collection } from 'chromadb';
import type { ChromaVectorIndex } from '../src/adapters/chroma/chroma-vector-index';
import { nearestOwnedThroughLangChain, UserChromaStores } from '../src/adapters/chroma/langchain-chroma';
import { chromaClient, nearestOwned } from '../src/adapters/chroma/user-collections';
import { MemoryAnnRetriever } from '../src/recall/retrievers/ann-retriever';
import { MemoryBm25Retriever } from '../src/recall/retrievers/bm25-retriever';
import { memoryIds } from '../src/recall/retrievers/memory-route';
import { QueryEmbeddings } from '../src/recall/retrievers/query-embeddings';
import { recall } from '../src/recall/recall';
import { fuseRankings } from '../src/core/recall/rrf';
import { sanitizeQuery } from '../src/core/recall/sanitize-query';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import { contains, loadScenarios } from '../src/eval/scenarios';
import { ingestScenario } from '../src/eval/runner';
import type { Runtime } from '../src/runtime';
import { fmt, startBenchStack, stats, timed } from './support';
import { analyzeAfterBulkLoad, BENCH_QUERIES, embeddingPool, loadUser } from './synthetic';

/**
 * Our retrieval against LangChain's: `BM25Retriever` (@langchain/community) and
 * `EnsembleRetriever` (@langchain/classic, weighted RRF with c = 60), the components a LangChain
 * user would reach for instead, on the same real stack in the same run.
 *
 * 1. Quality on the bilingual eval scenarios (ingested through the real extraction pipeline):
 *    with 300 distractor memories per user, does the top 5 of each retriever hold what the check expects?
 * 2. Latency at growing N for one user: our SQL BM25 over postings kept on write vs.
 *    BM25Retriever prebuilt in memory (query only) and rebuilt from PostgreSQL per query (what a
 *    stateless service must do to see the latest writes without a per-user cache to invalidate),
 *    and our ANN ∥ BM25 → RRF vs. EnsembleRetriever over the same ANN retriever.
 * 3. What recall's own route retrievers cost (the recall path runs them): the ANN route as
 *    `MemoryAnnRetriever.invoke` (LangChain's Chroma store on the user's collection) and the BM25
 *    route as `MemoryBm25Retriever.invoke`, against the direct calls recall made before — a raw
 *    `collection.query` of the user's collection and the store's BM25 — interleaved in one loop
 *    so drift hits every arm alike; then the fused ANN ∥ BM25 → RRF → hydrate both ways, and
 *    `recall()` end to end (the hot path's budget: p95 < 25 ms at 10k).
 *
 * Asserts nothing: it prints medians, tails and hit counts. `--no-quality` / `--no-latency` run
 * one half; `--quick` stops at 10k.
 */
const TOP_K = 5;
/** Memories of other topics added to every scenario user, so that ranking matters: with a handful of memories any retriever's top 5 holds them all. */
const DISTRACTORS_PER_USER = 300;

// Distractors are other facts about the same person on other topics, with the function words
// memories share (我, 了, I, a, the…) but no true answer to any check: no allergies, no plans for
// next week, and none of the strings a check expects or forbids ("go" included, which "goal"
// would contain). Otherwise BM25 would be right to rank "我对陶艺过敏" next to the peanut allergy.
const D_SUBJECTS_ZH = ['乐高', '陶艺', '象棋', '露营', '摄影', '书法', '潜水', '滑雪', '园艺', '吉他', '剪纸', '茶道', '拼图', '航模', '瑜伽', '插花'];
const D_SUBJECTS_EN = ['pottery', 'chess', 'camping', 'birdwatching', 'origami', 'calligraphy', 'kayaking', 'skiing', 'knitting', 'violin', 'baking bread', 'stamps', 'puzzles', 'archery', 'sailing', 'tennis'];
const D_FRAMES_ZH = ['我有一套{}的工具', '朋友送了我一本关于{}的书', '小区里新开了{}课', '我表哥在教{}', '{}俱乐部在城东', '昨天路过一家{}店', '我收藏了很多{}的照片', '我同事也玩{}', '{}是我小时候学过的', '我家楼下有人在练{}'];
const D_FRAMES_EN = ['I own a set of {} tools', 'a friend gave me a book about {}', 'there is a new {} class nearby', 'my cousin teaches {}', 'the {} club meets downtown', 'I walked past a {} shop yesterday', 'I keep photos of {}', 'my colleague also does {}', 'I tried {} as a kid', 'my neighbour practises {}'];
const D_TYPES = ['fact', 'fact', 'event', 'fact', 'fact', 'event', 'preference', 'fact', 'fact', 'fact'] as const;
const DISTRACTOR_COMBOS = [D_FRAMES_ZH, D_FRAMES_EN].flatMap((frames, lang) =>
  frames.flatMap((frame, f) => (lang === 0 ? D_SUBJECTS_ZH : D_SUBJECTS_EN).map((subject) => ({ text: frame.replace('{}', subject), type: D_TYPES[f]! }))),
);
const distractor = (i: number) => {
  const combo = DISTRACTOR_COMBOS[i % DISTRACTOR_COMBOS.length]!;
  return { text: `${combo.text} (#${i})`, type: combo.type };
};

// The bench reads rows straight from the pool, which the services' deps do not carry.
type Deps = Runtime['deps'] & Pick<Runtime, 'pool'>;

/**
 * BM25Retriever fed a query pre-segmented by our tokenizer (jieba + English), so the comparison
 * is not only about segmentation: its own preprocessing splits on whitespace, which leaves a
 * Chinese sentence as one "word". (Its scoring counts substrings, so Chinese documents match.)
 */
class SegmentedBM25Retriever extends BaseRetriever {
  lc_namespace = ['jarvis', 'bench'];
  private readonly inner: BM25Retriever;
  constructor(docs: Document[], k: number) {
    super();
    this.inner = BM25Retriever.fromDocuments(docs, { k });
  }
  static fromDocuments(docs: Document[], opts: { k: number }): SegmentedBM25Retriever {
    return new SegmentedBM25Retriever(docs, opts.k);
  }
  override async _getRelevantDocuments(query: string): Promise<Document[]> {
    return this.inner.invoke(tokenizeForIndex(query).join(' '));
  }
}

/** ANN over one user's Chroma vectors as a LangChain retriever, texts hydrated from PostgreSQL. */
class UserAnnRetriever extends BaseRetriever {
  lc_namespace = ['jarvis', 'bench'];
  constructor(
    private readonly deps: Deps,
    private readonly userId: string,
    private readonly k: number,
  ) {
    super();
  }
  override async _getRelevantDocuments(query: string): Promise<Document[]> {
    const ids = await annIds(this.deps, this.userId, query, this.k);
    return hydrate(this.deps, this.userId, ids);
  }
}

async function annIds(deps: Deps, userId: string, query: string, k: number): Promise<string[]> {
  const hits = await deps.vectors.query({ userId, embedding: await deps.embedder.embedQuery({ text: query }), k });
  return hits.map((h) => h.id);
}

async function hydrate(deps: Deps, userId: string, ids: string[]): Promise<Document[]> {
  if (ids.length === 0) return [];
  const { rows } = await deps.pool.query<{ id: string; text: string }>(`SELECT id, text FROM memories WHERE user_id = $1 AND status = 'active' AND id = ANY($2::uuid[])`, [userId, ids]);
  const byId = new Map(rows.map((r) => [r.id, r.text]));
  return ids.flatMap((id) => (byId.has(id) ? [new Document({ id, pageContent: byId.get(id)! })] : []));
}

/**
 * The user's active memories in an order unrelated to when they were written: BM25Retriever keeps
 * the input order for equal scores (zero included), so insertion order would decide its ties.
 */
async function activeDocuments(deps: Deps, userId: string): Promise<Document[]> {
  const { rows } = await deps.pool.query<{ id: string; text: string }>(`SELECT id, text FROM memories WHERE user_id = $1 AND status = 'active' ORDER BY md5(id::text)`, [userId]);
  return rows.map((r) => new Document({ id: r.id, pageContent: r.text }));
}

async function ourBm25(deps: Deps, userId: string, query: string, k: number): Promise<string[]> {
  return (await deps.memories.bm25({ userId, tokens: tokenizeForIndex(sanitizeQuery(query)), k })).map((h) => h.id);
}

async function ourFused(deps: Deps, userId: string, query: string, k: number): Promise<Document[]> {
  const clean = sanitizeQuery(query);
  const [ann, bm25] = await Promise.all([annIds(deps, userId, clean, 20), ourBm25(deps, userId, clean, 20)]);
  const fused = fuseRankings([
    { route: 'ann', ids: ann },
    { route: 'bm25', ids: bm25 },
  ]);
  return hydrate(deps, userId, fused.slice(0, k).map((f) => f.id));
}

export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  // Off by default: production never runs ANALYZE by hand (analyzeAfterBulkLoad).
  const analyze = args.includes('--analyze');
  const bench = await startBenchStack();
  try {
    if (!args.includes('--no-quality')) await compareQuality(bench.runtime, bench.config.tenants[0]!.key, analyze);
    if (!args.includes('--no-latency')) await compareLatency(bench.runtime, quick, analyze);
  } finally {
    await bench.stop();
  }
}

async function compareQuality(runtime: Runtime, apiKey: string, analyze: boolean): Promise<void> {
  const deps: Deps = { ...runtime.deps, pool: runtime.pool };
  const service = await serveInProcess(runtime, apiKey);
  const { client } = service;
  try {
    const scenarios = loadScenarios(resolve('test/fixtures/eval/scenarios.jsonl'));
    const runId = `cmp${randomBytes(3).toString('hex')}`;
    for (const s of scenarios) await ingestScenario(client, s, runId);
    // Each combo's real e5 vector (perturbed per memory by loadUser), aligned with distractor(i).
    const comboVectors = await deps.embedder.embedDocuments({ texts: DISTRACTOR_COMBOS.map((c) => c.text) });
    const scenarioUsers = [...new Set(scenarios.flatMap((s) => s.checks.map((c) => `${runId}-${c.user}`)))];
    for (const userId of scenarioUsers) await loadUser(runtime, comboVectors, userId, DISTRACTORS_PER_USER, 0, distractor);
    if (analyze) await analyzeAfterBulkLoad(runtime);

    const arms: Record<string, (userId: string, query: string) => Promise<string[]>> = {
      'ours: SQL BM25 (jieba)': async (u, q) => (await hydrate(deps, u, await ourBm25(deps, u, q, TOP_K))).map((d) => d.pageContent),
      'LangChain BM25Retriever (default tokenizer)': async (u, q) => (await BM25Retriever.fromDocuments(await activeDocuments(deps, u), { k: TOP_K }).invoke(q)).map((d) => d.pageContent),
      'LangChain BM25Retriever (our jieba tokenizer)': async (u, q) => (await SegmentedBM25Retriever.fromDocuments(await activeDocuments(deps, u), { k: TOP_K }).invoke(q)).map((d) => d.pageContent),
      'ours: ANN ∥ BM25 → RRF': async (u, q) => (await ourFused(deps, u, q, TOP_K)).map((d) => d.pageContent),
      'LangChain EnsembleRetriever(ANN, BM25Retriever default)': async (u, q) =>
        (await new EnsembleRetriever({ retrievers: [new UserAnnRetriever(deps, u, 20), BM25Retriever.fromDocuments(await activeDocuments(deps, u), { k: 20 })] }).invoke(q))
          .slice(0, TOP_K)
          .map((d) => d.pageContent),
      'LangChain EnsembleRetriever(ANN, BM25Retriever jieba)': async (u, q) =>
        (await new EnsembleRetriever({ retrievers: [new UserAnnRetriever(deps, u, 20), SegmentedBM25Retriever.fromDocuments(await activeDocuments(deps, u), { k: 20 })] }).invoke(q))
          .slice(0, TOP_K)
          .map((d) => d.pageContent),
    };
    const checks = scenarios.flatMap((s) => s.checks.filter((c) => c.expect.length > 0).map((c) => ({ scenario: s, check: c })));
    console.log(
      `\nquality: ${checks.length} checks of ${scenarios.length} scenarios, ${DISTRACTORS_PER_USER} distractor memories added per user; a check passes when the top ${TOP_K} texts hold every expected group and nothing forbidden`,
    );
    for (const [name, retrieve] of Object.entries(arms)) {
      let passed = 0;
      const missed: string[] = [];
      for (const { scenario, check } of checks) {
        const texts = (await retrieve(`${runId}-${check.user}`, check.query)).join('\n');
        const ok = check.expect.every((group) => group.some((s) => contains(texts, s))) && !check.forbid.some((s) => contains(texts, s));
        if (ok) passed++;
        else missed.push(scenario.id);
      }
      console.log(`  ${name.padEnd(58)} ${String(passed).padStart(2)}/${checks.length}${missed.length > 0 ? `   missed: ${missed.join(', ')}` : ''}`);
    }
  } finally {
    await service.close();
  }
}

/** Samples `fn` until `samples` runs or `budgetMs` of wall time, whichever comes first (the slow arms at 100k). */
async function sample(samples: number, budgetMs: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < samples && (out.length < 5 || performance.now() - t0 < budgetMs); i++) out.push((await timed(() => fn(i)))[1]);
  return out;
}

/** Runs every arm once per iteration, in an order that rotates, so that drift and warm-up hit all alike. */
async function interleaved(samples: number, arms: Record<string, (i: number) => Promise<unknown>>): Promise<Record<string, number[]>> {
  const names = Object.keys(arms);
  const out: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < samples; i++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length]!;
      out[name]!.push((await timed(() => arms[name]!(i)))[1]);
    }
  }
  return out;
}

/**
 * The recall path's route retrievers against the direct calls they replaced, for one user of `n`
 * memories; p50, p95 and the p50 ratio to the raw Chroma query.
 */
async function routeRetrieverLatency(runtime: Runtime, user: string, samples: number, q: (i: number) => string): Promise<string[]> {
  const deps: Deps = { ...runtime.deps, pool: runtime.pool };
  const vectors = deps.vectors as ChromaVectorIndex;
  const collection = await chromaClient(runtime.endpoints.chromaUrl).getCollection({ name: vectors.collectionName(user), embeddingFunction: null as never });
  const annDirect = async (query: string) => nearestOwned(collection, user, { embedding: await deps.embedder.embedQuery({ text: query }), k: 20 });
  const annRetriever = (query: string) => new MemoryAnnRetriever({ vectors, embeddings: new QueryEmbeddings(deps.embedder), userId: user, k: 20 }).invoke(query);
  const bm25Direct = (query: string) => deps.memories.bm25({ userId: user, tokens: tokenizeForIndex(sanitizeQuery(query)), k: 20 });
  const bm25Retriever = (query: string) => new MemoryBm25Retriever({ memories: deps.memories, userId: user, k: 20 }).invoke(sanitizeQuery(query));
  const fusedThrough = async (query: string, ann: (q: string) => Promise<string[]>, bm25: (q: string) => Promise<string[]>) => {
    const clean = sanitizeQuery(query);
    const [a, b] = await Promise.all([ann(clean), bm25(clean)]);
    const fused = fuseRankings([
      { route: 'ann', ids: a },
      { route: 'bm25', ids: b },
    ]);
    return hydrate(deps, user, fused.slice(0, 20).map((f) => f.id));
  };
  const now = new Date();
  const arms = await interleaved(samples, {
    raw: (i) => annDirect(q(i)),
    index: async (i) => vectors.query({ userId: user, embedding: await deps.embedder.embedQuery({ text: q(i) }), k: 20 }),
    annRetriever: (i) => annRetriever(q(i)),
    bm25Direct: (i) => bm25Direct(q(i)),
    bm25Retriever: (i) => bm25Retriever(q(i)),
    fusedDirect: (i) =>
      fusedThrough(
        q(i),
        async (x) => (await annDirect(x)).map((h) => h.id),
        async (x) => (await bm25Direct(x)).map((h) => h.id),
      ),
    fusedRetrievers: (i) =>
      fusedThrough(
        q(i),
        async (x) => memoryIds(await annRetriever(x)),
        async (x) => memoryIds(await bm25Retriever(x)),
      ),
    recall: (i) => recall(deps, user, q(i), { now }),
  });
  const floor = stats(arms.raw!).p50;
  const row = (name: string, xs: number[]) => {
    const s = stats(xs);
    return `  ${name.padEnd(58)} p50 ${fmt(s.p50).padStart(9)}  p95 ${fmt(s.p95).padStart(9)}  ×${(s.p50 / floor).toFixed(2).padStart(5)} raw  (n=${s.n})`;
  };
  return [
    row('raw Chroma collection.query (direct, before), k = 20', arms.raw!),
    row('ChromaVectorIndex.query (LangChain Chroma store)', arms.index!),
    row('MemoryAnnRetriever.invoke (BaseRetriever + store)', arms.annRetriever!),
    row('store BM25 (direct, before)', arms.bm25Direct!),
    row('MemoryBm25Retriever.invoke', arms.bm25Retriever!),
    row('ANN ∥ BM25 → RRF → hydrate, direct calls (before)', arms.fusedDirect!),
    row('ANN ∥ BM25 → RRF → hydrate, through the retrievers', arms.fusedRetrievers!),
    row('recall() end to end (all routes, budgeted context)', arms.recall!),
  ];
}

/**
 * What LangChain adds per call, in CPU time alone (no I/O, so the machine's load barely moves it):
 * a BaseRetriever's `invoke` (callback manager, run ids) around an instant fake port, and the
 * `Chroma` store's result mapping around an instant fake collection, each against the bare call.
 */
export async function langchainOverhead(iterations = 20_000): Promise<string[]> {
  const hits = Array.from({ length: 20 }, (_, i) => ({ id: `m${i}`, similarity: 1 - i / 100 }));
  const vectors = { query: async () => hits };
  const embedding = Array.from({ length: 384 }, (_, i) => i / 384);
  const embeddings = { embedQuery: async () => embedding };
  const result = { ids: [hits.map((h) => h.id)], distances: [hits.map((h) => 1 - h.similarity)], metadatas: [hits.map(() => ({ user_id: 'u' }))], documents: [hits.map(() => null)] };
  const collection = { name: 'bench', query: async () => result } as unknown as Collection;
  const store = new UserChromaStores({} as never).storeOf(collection);
  const perCall = async (fn: () => Promise<unknown>) => {
    for (let i = 0; i < 1000; i++) await fn();
    const t0 = performance.now();
    for (let i = 0; i < iterations; i++) await fn();
    return ((performance.now() - t0) * 1000) / iterations;
  };
  const rows: [string, number][] = [
    ['fake VectorIndex.query, called directly', await perCall(() => vectors.query())],
    ['MemoryAnnRetriever.invoke over it (new retriever per call)', await perCall(() => new MemoryAnnRetriever({ vectors, embeddings, userId: 'u', k: 20 }).invoke('q'))],
    ['fake collection: nearestOwned (raw mapping)', await perCall(() => nearestOwned(collection, 'u', { embedding, k: 20 }))],
    ['fake collection: Chroma store similaritySearchVectorWithScore', await perCall(() => nearestOwnedThroughLangChain(store, 'u', { embedding, k: 20 }))],
  ];
  return rows.map(([name, us]) => `  ${name.padEnd(62)} ${us.toFixed(1).padStart(7)} µs/call`);
}

async function compareLatency(runtime: Runtime, quick: boolean, analyze: boolean): Promise<void> {
  console.log(`LangChain's own cost per call (CPU only, 20k calls each):\n${(await langchainOverhead()).join('\n')}`);
  const deps: Deps = { ...runtime.deps, pool: runtime.pool };
  const sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const samples = quick ? 60 : 200;
  const pool = await embeddingPool(runtime);
  for (let u = 0; u < 20; u++) await loadUser(runtime, pool, `cmp-other-${u}`, 200, u * 200);
  const q = (i: number) => BENCH_QUERIES[i % BENCH_QUERIES.length]!;
  // Query embeddings are cached by the embedder, so every arm pays the same (warm) embedding cost.
  const queryVectors = new Map<string, number[]>();
  for (const query of BENCH_QUERIES) queryVectors.set(query, await deps.embedder.embedQuery({ text: query }));

  const table: string[] = [];
  for (const n of sizes) {
    const user = `cmp-target-${n}`;
    await loadUser(runtime, pool, user, n, 2_000_000);
    if (analyze) await analyzeAfterBulkLoad(runtime);
    const [docs, loadMs] = await timed(() => activeDocuments(deps, user));
    const [prebuilt, buildMs] = await timed(async () => SegmentedBM25Retriever.fromDocuments(docs, { k: 20 }));
    const ensemble = new EnsembleRetriever({ retrievers: [new UserAnnRetriever(deps, user, 20), prebuilt] });
    const heapMb = (process.memoryUsage().heapUsed / 2 ** 20).toFixed(0);

    const floor = await sample(samples, 20_000, (i) => deps.vectors.query({ userId: user, embedding: queryVectors.get(q(i))!, k: 20 }));
    const oursBm25 = await sample(samples, 20_000, (i) => ourBm25(deps, user, q(i), 20));
    const lcPrebuilt = await sample(samples, 20_000, (i) => prebuilt.invoke(q(i)));
    const lcRebuilt = await sample(samples, 20_000, async (i) => SegmentedBM25Retriever.fromDocuments(await activeDocuments(deps, user), { k: 20 }).invoke(q(i)));
    const oursFused = await sample(samples, 20_000, (i) => ourFused(deps, user, q(i), 20));
    const lcEnsemble = await sample(samples, 20_000, (i) => ensemble.invoke(q(i)));

    const row = (name: string, xs: number[]) => {
      const s = stats(xs);
      return `  ${name.padEnd(50)} p50 ${fmt(s.p50).padStart(9)}  p95 ${fmt(s.p95).padStart(9)}  (n=${s.n})`;
    };
    const block = [
      `N = ${n} (docs loaded from PostgreSQL in ${fmt(loadMs)}, BM25Retriever built in ${fmt(buildMs)}, heap ${heapMb} MB)`,
      row('raw Chroma query, k = 20 (floor)', floor),
      row('ours: SQL BM25 over postings', oursBm25),
      row('LangChain BM25Retriever, prebuilt in memory', lcPrebuilt),
      row('LangChain BM25Retriever, rebuilt per query', lcRebuilt),
      row('ours: ANN ∥ BM25 → RRF → hydrate', oursFused),
      row('LangChain EnsembleRetriever(ANN, prebuilt BM25)', lcEnsemble),
    ];
    block.push(`  recall's route retrievers against the direct calls (interleaved, query embeddings warm in the embedder's cache):`, ...(await routeRetrieverLatency(runtime, user, samples * 2, q)));
    console.log(block.join('\n'));
    table.push(...block);
  }
  console.log('\nretriever latency (one user, 20 others present, k = 20, warm query embeddings)');
  for (const line of table) console.log(line);
}
