import diagnosticsChannel from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type pg from 'pg';
import { traceStatements, type StatementTiming } from '../src/adapters/postgres/pool';
import { recall, type RecallDeps, type RecallResult } from '../src/recall/recall';
import { WorkingSetCache } from '../src/recall/working-set-cache';
import { bm25Text } from '../src/recall/route-plan';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import { MEMORY_TYPES } from '../src/core/memory-types';
import { rebuildPersona } from '../src/persona/persona';
import { cpuByProgram, cpuByThread, cpuPerOperation, fmt, giveChromaItsOwnCore, PausesBeside, ratioInterval, startBenchStack, stats, timed, type BenchStack } from './support';
import { chatMemory, chatQueries, prng } from './chat-corpus';
import { analyzeAfterBulkLoad, BENCH_QUERIES, embeddingPool, loadExchangeVectors, loadUser, syntheticText } from './synthetic';

/**
 * The SQL floor: 20 of the user's memories (ids drawn from theirs once, before the loop) read by
 * primary key alone, a plan no statistics can change; a user filter beside it made the planner
 * of never-analysed tables intersect it with the user's 10,000 index entries. Until 2026-12-04
 * it was the user's 20 most important active memories: estimating one row for the user, the
 * planner read all 10,000 through another index and sorted them (2,752 buffers, 4.6–4.7 ms at
 * p50 in full runs), always right before the timed recall, which then took 0.6–1.2 ms longer
 * than with no SQL floor at all.
 */
const SQL_FLOOR = 'SELECT id FROM memories WHERE id = ANY($1::uuid[])';

/** `items` in a random order drawn from `random` (Fisher–Yates). */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Recall + format latency at 1k, 10k and 100k memories for one user, with 100 other users in the
 * same stores, against real Chroma and PostgreSQL. The floor is a raw Chroma query of the same k
 * on the user's vectors (their own collection), measured interleaved in the same run; the SQL
 * floor reads 20 of the user's memories by primary key ({@link SQL_FLOOR}); the three run in a
 * shuffled order in each sample. "warm" reuses query embeddings
 * (cache); "cold" embeds every query (the e5 call is part of the chat path then).
 * `--persona` builds the target user's persona (L3 profile) and measures warm recall with and
 * without it, interleaved, so the persona's read is compared under the same load.
 * `--exchanges` also gives the target user as many exchange vectors as memories, so the exchange
 * vector route (run on every recall) searches a collection of that size rather than none, and
 * measures warm recall with that route switched off for ordinary queries (the similarity floors at
 * 1), interleaved with the default, so its cost is compared under the same load.
 * `--corpus=chat` loads every user's memories from the generated multi-topic bilingual chat of the
 * HTTP sweep (chat-corpus.ts: names, places, numbers and topics varying per line) and asks its
 * queries with the two chat lines before each; the default, `synthetic`, composes every memory
 * from 20 subjects and 8 frames, so each query term is in about a tenth of a user's memories
 * (BM25's costliest case, kept for comparison with the earlier rows).
 */
export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const corpus = args.find((a) => a.startsWith('--corpus='))?.slice('--corpus='.length) ?? 'synthetic';
  if (corpus !== 'synthetic' && corpus !== 'chat') throw new Error('--corpus is synthetic or chat');
  const textOf = corpus === 'chat' ? (i: number) => chatMemory(prng(i)) : syntheticText;
  // The zone the client sends with each query (`--zone=UTC` as before 2026-12-04): a chat user's
  // dates are rendered and read in their own zone, which costs more than UTC's.
  const zone = args.find((a) => a.startsWith('--zone='))?.slice('--zone='.length) ?? (corpus === 'chat' ? 'Asia/Shanghai' : undefined);
  const queries: readonly BenchQuery[] = (corpus === 'chat' ? chatQueries(16) : PLAIN_QUERIES).map((q) => (zone ? { ...q, timeZone: zone } : q));
  // Off by default: production never runs ANALYZE by hand (analyzeAfterBulkLoad).
  const analyze = args.includes('--analyze');
  const withPersona = args.includes('--persona');
  const withExchanges = args.includes('--exchanges');
  // `--trace`: after the timed samples, where the time of a warm recall goes, statement by statement (traceRecalls).
  const trace = args.includes('--trace');
  // `--profile`: a CPU profile of this process over 100 more warm recalls (`--profile=500`: that many): where the Node side of a recall spends its time, by function and by file.
  const profileArg = args.find((a) => a === '--profile' || a.startsWith('--profile='));
  const profile = profileArg !== undefined;
  const profiledRecalls = profileArg?.startsWith('--profile=') ? Math.max(1, Number(profileArg.slice('--profile='.length)) || 100) : 100;
  // `--profile-out=<file>`: the profile itself too, for Chrome DevTools or a script that sums it by caller (inclusive times).
  const profileOut = args.find((a) => a.startsWith('--profile-out='))?.slice('--profile-out='.length);
  // `--burn-before-answer=<ms>`, `--burn-after-answer=<ms>`: the timed recall (not the floor) spends
  // that much more CPU on this thread, while its Chroma query is on the wire or the moment its hits
  // are back (burningBesideChroma): what a millisecond of recall's own work costs it on either side.
  const burn = { before: burnArg(args, 'before'), after: burnArg(args, 'after') };
  // `--alloc`: what 100 more warm recalls allocate, by function and by file, garbage included (the young generation's scavenges pause the whole process).
  const alloc = args.includes('--alloc');
  // `--survivors`: what outlives a scavenge, by allocating function, for each of the timed loop's operations alone (3 s each; V8's sampling heap profiler keeping what minor GCs did not collect).
  const survivors = args.includes('--survivors');
  // `--gc-phases`: 3 s of each of the timed loop's operations alone (Chroma floor, SQL floor, warm recall), each begun with a line on stderr, to read beside `node --trace-gc-nvp`: which one fills the scavenges.
  const gcPhases = args.includes('--gc-phases');
  // `--stock-pool`: also warm recall with pg-pool's own hand-out of clients (a later tick), interleaved, against the pool's (pool.ts).
  const stockPool = args.includes('--stock-pool');
  // `--by-query`: the warm recall's p50/p95 per query text, slowest first, with the routes it ran: which kind of question sets the tail.
  const byQuery = args.includes('--by-query');
  // `--cpu`: CPU time per warm recall and per raw Chroma query, by process (this one, PostgreSQL, Chroma), each run back to back: what a recall asks of two cores.
  const cpu = args.includes('--cpu');
  // `--unnamed`: also warm recall with every statement sent unnamed (planned on every call), interleaved, against the named statements (prepared.ts).
  // `--ungated`: also warm recall with every route run whatever the user's stores hold (history-gate.ts), interleaved.
  // `--before`: also warm recall with both (statements unnamed, routes ungated), interleaved: this branch's before.
  // `--bounds`: lower bounds, not designs: also warm recall with the short lists (`free-lists`), memory BM25
  // (`free-bm25`), both (`free-both`), or those and the ANN hydration and time route too (`free-sql`: what is
  // left is the Chroma query and recall's JavaScript) answered from memory, their statements' answers
  // recorded once per query, interleaved: how close to the floor recall could come if those statements cost nothing.
  const bounds = args.includes('--bounds');
  const variants = [...(['unnamed', 'ungated', 'before'] as const).filter((v) => args.includes(`--${v}`)), ...(bounds ? FREE_VARIANTS : [])];
  // Recall reads a user it holds from the process's working set (src/recall/working-set-cache.ts), as
  // production does. `--sql-reads`: also warm recall with no working set (every read a statement),
  // interleaved. `--no-working-set`: the timed recall itself reads through SQL, as before the working
  // set; the variants above compare their answers with it, so they imply it.
  const sqlReads = args.includes('--sql-reads');
  const workingSet = !args.includes('--no-working-set') && variants.length === 0;
  // `--gc`: how many of the slowest 10 % of warm recalls had a pause of the collector inside, against the rest (PausesBeside).
  const gc = args.includes('--gc');
  // `--own-core`: Chroma gets a core of its own and this process the others, as on hosts of their
  // own (giveChromaItsOwnCore); by default every process shares every core, as on one machine.
  const ownCore = args.includes('--own-core');
  // `--warm-up=N` (3,000 unless given): recalls of the other users, each with a query of its own,
  // before anything is timed. A production API process has served thousands of recalls; over its
  // first few hundred V8 still compiles recall's functions (formatting, the HTTP client's streams,
  // each called a few times per recall) beside them, on the two cores Chroma needs too. After 600
  // recalls V8's helper threads still took ~1.4 ms of CPU per recall (51 functions optimised during
  // 100 timed samples); after 3,000, ~0.3 ms (10). `--warm-up=600` times as from 9c953c7,
  // `--warm-up=0` as before it, after the target user's 20 warm-up recalls alone.
  const warmUp = Number(args.find((a) => a.startsWith('--warm-up='))?.slice('--warm-up='.length) ?? 3_000);
  if (!Number.isInteger(warmUp) || warmUp < 0) throw new Error('--warm-up takes a whole number of recalls');
  // `--sizes=10000` measures only the sizes named (the other users are loaded all the same).
  const named = args.find((a) => a.startsWith('--sizes='))?.slice('--sizes='.length);
  const sizes = named ? named.split(',').map(Number) : quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const others = quick ? 20 : 100;
  const perOther = quick ? 200 : 500;
  // A p95 of 300 samples rests on its 15 largest: runs of one commit put its ratio to the floor
  // anywhere from ×1.27 to ×1.63 (docs/benchmarks.md). Of 1,000, on its 50 largest: runs of one
  // commit still spread over ×1.37–×1.53 around a line at ×1.5. 5,000 (~40 s per size) narrow a
  // run's interval about √5-fold; `--samples=N` takes another count.
  const samples = Number(args.find((a) => a.startsWith('--samples='))?.slice('--samples='.length) ?? (quick ? 100 : 5_000));
  if (!Number.isInteger(samples) || samples < 20) throw new Error('--samples takes a whole number of at least 20');
  const bench = await startBenchStack();
  try {
    const { runtime } = bench;
    const placement = ownCore ? giveChromaItsOwnCore(bench.stack) : 'shared by every process';
    console.log(`cores: ${placement}`);
    const pool = corpus === 'chat' ? await embeddingPool(runtime, 256, (i) => chatMemory(prng(7_000_000 + i)).text) : await embeddingPool(runtime);
    let t0 = performance.now();
    for (let u = 0; u < others; u++) await loadUser(runtime, pool, `other-${u}`, perOther, u * perOther, textOf);
    console.log(`loaded ${others} other users × ${perOther} memories (${corpus} corpus) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (warmUp > 0) {
      // Queries of another seed than the timed ones, asked of other users: the process warms up,
      // the target user's caches do not.
      const warmUpQueries = (corpus === 'chat' ? chatQueries(64, 4242) : PLAIN_QUERIES).map((q) => (zone ? { ...q, timeZone: zone } : q));
      const warmUpDeps: RecallDeps = workingSet ? runtime.deps : { ...runtime.deps, workingSets: undefined };
      t0 = performance.now();
      for (let i = 0; i < warmUp; i++) {
        const asked = warmUpQueries[i % warmUpQueries.length]!;
        await recall(warmUpDeps, `other-${i % others}`, asked.query, recallOptions(asked, new Date()));
      }
      console.log(`warmed the process up with ${warmUp} recalls of the other users in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    const queryVectors = new Map<string, number[]>();
    for (const q of queries) queryVectors.set(q.query, await runtime.deps.embedder.embedQuery({ text: q.query }));

    const rows: string[] = [];
    for (const n of sizes) {
      const user = `target-${n}`;
      t0 = performance.now();
      await loadUser(runtime, pool, user, n, 1_000_000, textOf);
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
      const stock: number[] = [];
      const variantMs = new Map<string, number[]>(variants.map((v) => [v, []]));
      const viaSql: RecallDeps = { ...runtime.deps, workingSets: undefined };
      const main: RecallDeps = burningBesideChroma(workingSet ? runtime.deps : viaSql, burn);
      if (burn.before > 0 || burn.after > 0) console.log(`        burning ${burn.before} ms of CPU while recall's Chroma query is on the wire, ${burn.after} ms when its hits are back`);
      for (let i = 0; i < 20; i++) {
        const asked = queries[i % queries.length]!;
        await recall(main, user, asked.query, recallOptions(asked, now)); // warm-up
      }
      const cache = runtime.deps.workingSets instanceof WorkingSetCache ? runtime.deps.workingSets : undefined;
      // The load runs beside the warm-up: wait for it, as a chat's first messages would.
      for (let i = 0; workingSet && cache && i < 600 && !cache.isHeld(user); i++) {
        await new Promise((r) => setTimeout(r, 50));
        await recall(main, user, queries[0]!.query, recallOptions(queries[0]!, now));
      }
      const readsBefore = cache ? { ...cache.reads } : undefined;
      console.log(`        working set: ${workingSet ? (cache?.isHeld(user) ? `held (${cache.heldMemories} memories in the process)` : 'not held (over RECALL_WORKING_SET_MEMORIES, or off)') : 'off for the timed recall'}`);
      const sqlOnly: number[] = [];
      let sqlDiffers = 0;
      const differingQueries = new Set<string>();
      const recorded = new Map<string, Promise<unknown>>();
      // Each query's statements answered once before timing, so no free variant's sample pays a statement.
      if (bounds) for (const asked of queries) await recall(answeredFromMemory(viaSql, recorded, 'free-sql'), user, asked.query, recallOptions(asked, now));
      const warm: number[] = [];
      const warmByQuery = new Map<string, { ms: number[]; routes: string }>();
      const perRoute = new Map<string, number[]>();
      const floor: number[] = [];
      const sqlFloor: number[] = [];
      const order = prng(n);
      const userIds = (await runtime.pool.query<{ id: string }>('SELECT id FROM memories WHERE user_id = $1 LIMIT 1000', [user])).rows.map((row) => row.id);
      const loop = loopOperations(runtime, main, user, now, queryVectors, userIds, order);
      const pauses = gc ? new PausesBeside() : undefined;
      for (let i = 0; i < samples; i++) {
        const asked = queries[i % queries.length]!;
        const q = asked.query;
        const options = recallOptions(asked, now);
        // The three operations in a shuffled order, each sample its own: each is timed after each
        // of the others as often, so what one leaves in the CPU's caches (the SQL floor's rows,
        // Chroma's index after the same query vector) favours none of them.
        let answered: [RecallResult, number] | undefined;
        const operations = [
          async () => floor.push((await timed(() => loop.chromaFloor(asked)))[1]),
          async () => sqlFloor.push((await timed(loop.sqlFloor))[1]),
          async () => void (answered = await timed(() => (pauses ? pauses.time(() => loop.recall(asked)) : loop.recall(asked)))),
        ];
        for (const operation of shuffled(operations, order)) await operation();
        const [r, w] = answered!;
        if (r.error) throw new Error(`recall degraded during the benchmark: ${r.error.message}`);
        warm.push(w);
        if (byQuery) {
          const entry = warmByQuery.get(q) ?? { ms: [], routes: r.routes.map((x) => x.route).join(' ') };
          entry.ms.push(w);
          warmByQuery.set(q, entry);
        }
        if (withPersona) {
          const [r0, w0] = await timed(() => recall(noPersona, user, q, options));
          if (!r.context.system.includes('\n- ') || r0.context.system.includes('\n- ')) throw new Error('the persona A/B is not what it should be');
          without.push(w0);
          personaRead.push((await timed(() => runtime.deps.personas!.forRecall({ userId: user, now })))[1]);
        }
        if (stockPool) {
          const eager = runtime.pool.connect;
          runtime.pool.connect = Object.getPrototypeOf(runtime.pool).connect;
          try {
            stock.push((await timed(() => recall(main, user, q, options)))[1]);
          } finally {
            runtime.pool.connect = eager;
          }
        }
        if (sqlReads) {
          const [r0, w0] = await timed(() => recall(viaSql, user, q, options));
          sqlOnly.push(w0);
          if (JSON.stringify(r0.memories.map((m) => m.id)) !== JSON.stringify(r.memories.map((m) => m.id))) {
            sqlDiffers++;
            if (!differingQueries.has(q)) {
              differingQueries.add(q);
              const line = (x: typeof r) => x.memories.map((m) => `${m.id.slice(0, 8)}:${m.score.toFixed(4)}:${m.routes.join('+')}`).join(' ');
              console.log(`        answers differ for ${JSON.stringify(q)}\n          held: ${line(r)}\n          sql:  ${line(r0)}`);
              // Where memory BM25 is the difference: the held set scores every posting, the SQL cuts a common term's.
              const tokens = tokenizeForIndex(bm25Text({ query: q, options }));
              const fallback = { lists: runtime.deps.recallLists!, memories: runtime.deps.memories };
              const heldHits = (await runtime.deps.workingSets!.forRequest(user, now, fallback).bm25WithMemories({ userId: user, now, tokens, k: 20 })).hits;
              const cutHits = (await runtime.deps.recallLists!.bm25WithMemories({ userId: user, now, tokens, k: 20 })).hits;
              const exactHits = await runtime.deps.memories.bm25({ userId: user, tokens, k: 20, types: [...MEMORY_TYPES] });
              // Many memories of the synthetic corpus share a text: compare the scores, since a float sum taken in another order breaks such ties in its last bits.
              const scores = (hits: { score: number }[]) => hits.map((h) => h.score.toFixed(9)).join(',');
              const tied = new Set(exactHits.map((h) => h.score.toFixed(9))).size;
              console.log(`          memory BM25 top 20 (${tied} distinct scores): held scores = exact SQL's: ${scores(heldHits) === scores(exactHits)}; SQL cut's = exact SQL's: ${scores(cutHits) === scores(exactHits)}`);
            }
          }
        }
        for (const v of variants) {
          const free = isFreeVariant(v);
          const restore = v === 'ungated' || free ? () => {} : sendUnnamed(runtime.pool);
          const deps = free ? answeredFromMemory(viaSql, recorded, v) : v === 'unnamed' ? viaSql : ungated(viaSql);
          try {
            const [rv, ms] = await timed(() => recall(deps, user, q, options));
            if (JSON.stringify(rv.memories) !== JSON.stringify(r.memories) || rv.context.system !== r.context.system) throw new Error(`recall ${v} answered otherwise`);
            variantMs.get(v)!.push(ms);
            for (const route of rv.routes) perRoute.set(`${v}:${route.route}`, [...(perRoute.get(`${v}:${route.route}`) ?? []), route.ms]);
          } finally {
            restore();
          }
        }
        if (withExchanges) withoutVector.push((await timed(() => recall(noVectorEvidence, user, q, options)))[1]);
        for (const route of r.routes) perRoute.set(route.route, [...(perRoute.get(route.route) ?? []), route.ms]);
      }
      // A text not seen before at any size, so the embedder's query cache cannot answer it.
      const cold: number[] = [];
      for (let i = 0; i < Math.min(60, samples); i++) {
        const asked = queries[i % queries.length]!;
        const [, c] = await timed(() => recall(main, user, `${asked.query} ${n}-${i}`, recallOptions(asked, now)));
        cold.push(c);
      }
      const W = stats(warm);
      const F = stats(floor);
      const S = stats(sqlFloor);
      const C = stats(cold);
      const [low, high] = ratioInterval(warm, floor, 95);
      rows.push(
        `${String(n).padStart(7)} | warm p50 ${fmt(W.p50)} p95 ${fmt(W.p95)} p99 ${fmt(W.p99)} | cold p50 ${fmt(C.p50)} p95 ${fmt(C.p95)} | chroma floor p50 ${fmt(F.p50)} p95 ${fmt(F.p95)} | sql floor p50 ${fmt(S.p50)} | warm/chroma p50 ×${(W.p50 / F.p50).toFixed(2)} p95 ×${(W.p95 / F.p95).toFixed(2)} (95 % interval ×${low.toFixed(2)}–×${high.toFixed(2)})`,
      );
      console.log(rows.at(-1));
      // The ratio moves with the floor: Chroma's query costs more or less from run to run (each run
      // builds its collection anew), while what recall adds to it stays about the same in time.
      const beyond = stats(warm.map((w, i) => w - floor[i]!));
      console.log(`        recall beyond the floor: p50 ${fmt(W.p50 - F.p50)}, p95 ${fmt(W.p95 - F.p95)}; per sample (recall − the floor query beside it) p50 ${fmt(beyond.p50)}, p95 ${fmt(beyond.p95)}`);
      if (pauses) console.log(`        ${pauses.report('warm recalls')}`);
      if (byQuery) {
        const slowest = [...warmByQuery].map(([q, e]) => ({ q, ...stats(e.ms), routes: e.routes })).sort((a, b) => b.p95 - a.p95);
        for (const x of slowest) console.log(`        ${fmt(x.p50)} / ${fmt(x.p95)}  ${JSON.stringify(x.q)}: ${x.routes}`);
      }
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
      if (stockPool) {
        const K = stats(stock);
        console.log(`        pool hand-out: at once p50 ${fmt(W.p50)} p95 ${fmt(W.p95)} | pg-pool's next tick p50 ${fmt(K.p50)} p95 ${fmt(K.p95)} (interleaved) | stock/chroma p50 ×${(K.p50 / F.p50).toFixed(2)} p95 ×${(K.p95 / F.p95).toFixed(2)}`);
      }
      if (sqlReads) {
        const Q = stats(sqlOnly);
        console.log(`        this branch p50 ${fmt(W.p50)} p95 ${fmt(W.p95)} | sql-reads p50 ${fmt(Q.p50)} p95 ${fmt(Q.p95)} (interleaved) | sql-reads/chroma p50 ×${(Q.p50 / F.p50).toFixed(2)} p95 ×${(Q.p95 / F.p95).toFixed(2)} | memories or their order differ in ${sqlDiffers} of ${samples} answers`);
      }
      if (cache && readsBefore) console.log(`        working-set reads during the samples: held ${cache.reads.held - readsBefore.held}, sql ${cache.reads.sql - readsBefore.sql}, dropped ${cache.reads.dropped - readsBefore.dropped}`);
      for (const [v, ms] of variantMs) {
        const U = stats(ms);
        console.log(`        this branch p50 ${fmt(W.p50)} p95 ${fmt(W.p95)} | ${v} p50 ${fmt(U.p50)} p95 ${fmt(U.p95)} (interleaved) | ${v}/chroma p50 ×${(U.p50 / F.p50).toFixed(2)} p95 ×${(U.p95 / F.p95).toFixed(2)}`);
      }
      console.log(`        routes p50/p95: ${[...perRoute].map(([name, ms]) => `${name} ${fmt(stats(ms).p50)}/${fmt(stats(ms).p95)}`).join(', ')}`);
      if (trace) await traceRecalls(main, runtime.pool, user, now, Math.min(100, samples), queries);
      if (profile) await profileRecalls(main, user, now, profiledRecalls, queries, profileOut);
      if (alloc) await allocationsOfRecalls(main, user, now, 100, queries);
      if (survivors) await survivorsOfOperations(loop, queries);
      if (gcPhases) await phasesForTheCollector(loop, queries);
      if (cpu) await cpuPerRecall(main, user, now, samples, queries, queryVectors);
    }
    console.log('\nrecall + format latency (one user, others present; k = 20 per route)');
    for (const r of rows) console.log(r);
  } finally {
    await bench.stop();
  }
}

/** A query as a chat app sends it: the message, and the chat lines before it when it has them. */
export interface BenchQuery {
  query: string;
  recentMessages?: string[];
  timeZone?: string;
}

const PLAIN_QUERIES: readonly BenchQuery[] = BENCH_QUERIES.map((query) => ({ query }));

function recallOptions(q: BenchQuery, now: Date): { now: Date; recentMessages?: string[]; timeZone?: string } {
  return { now, ...(q.recentMessages ? { recentMessages: q.recentMessages } : {}), ...(q.timeZone ? { timeZone: q.timeZone } : {}) };
}

/** Sends every statement of the pool unnamed (parsed and planned on each call) until the returned function is called. */
function sendUnnamed(pool: pg.Pool): () => void {
  const original = pool.query;
  pool.query = ((first: unknown, ...rest: unknown[]) => {
    const config = typeof first === 'object' && first !== null && 'name' in first ? { ...(first as { name?: string }), name: undefined } : first;
    return (original as (...a: unknown[]) => unknown).call(pool, config, ...rest);
  }) as typeof pool.query;
  return () => {
    pool.query = original;
  };
}

/** Whether a node:http diagnostics message is about a Chroma query (the only `/query` path this process requests). */
function isChromaQuery(message: unknown): boolean {
  return (message as { request?: { path?: string } }).request?.path?.endsWith('/query') === true;
}

/** The milliseconds of `--burn-<side>-answer=<ms>`, 0 when absent. */
function burnArg(args: readonly string[], side: 'before' | 'after'): number {
  const flag = `--burn-${side}-answer=`;
  const given = args.find((a) => a.startsWith(flag));
  if (given === undefined) return 0;
  const ms = Number(given.slice(flag.length));
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`${flag}<ms> takes a number of milliseconds`);
  return ms;
}

/** Keeps this thread busy for `ms`, as recall's own JavaScript would. */
function burnCpu(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * Recall's deps with extra CPU on this thread beside its Chroma query: `before` ms on the next
 * turn of the event loop after the query's request is made (Chroma works on it meanwhile), `after`
 * ms the moment its hits are back, before recall goes on. A test of where recall's own work costs
 * its latency on two shared cores: work that overlaps Chroma's, or work after its answer.
 */
function burningBesideChroma(deps: RecallDeps, burn: { before: number; after: number }): RecallDeps {
  if (burn.before <= 0 && burn.after <= 0) return deps;
  let armed = false;
  // Only this wrapper arms it, so the floor's query, made through the stack's own index, never burns.
  diagnosticsChannel.subscribe('http.client.request.start', (message) => {
    if (!armed || !isChromaQuery(message)) return;
    armed = false;
    setImmediate(() => burnCpu(burn.before));
  });
  const vectors = overriding(deps.vectors, {
    query: async (...a: Parameters<RecallDeps['vectors']['query']>) => {
      armed = burn.before > 0;
      const hits = await deps.vectors.query(...a);
      burnCpu(burn.after);
      return hits;
    },
  });
  return { ...deps, vectors };
}

/** `target` with some of its methods replaced, the rest still its own (through the prototype). */
function overriding<T extends object>(target: T, methods: Partial<T>): T {
  return Object.assign(Object.create(target) as T, methods);
}

/** Recall's deps with the short lists asked no history: every route runs, as before history-gate.ts. */
function ungated(deps: RecallDeps): RecallDeps {
  const lists = deps.recallLists;
  if (!lists) return deps;
  return { ...deps, recallLists: overriding(lists, { memoryLists: (input) => lists.memoryLists({ ...input, history: false }) }) };
}

const FREE_VARIANTS = ['free-lists', 'free-bm25', 'free-both', 'free-sql'] as const;
type FreeVariant = (typeof FREE_VARIANTS)[number];
const isFreeVariant = (v: string): v is FreeVariant => (FREE_VARIANTS as readonly string[]).includes(v);

/**
 * Recall's deps with the short lists, memory BM25, both, or every statement (`free-sql`: also the
 * ANN hydration and the time route) answered from `recorded` (the first answer to the same input,
 * asked for real): what recall would cost if those statements cost nothing. A bound for
 * `--bounds`, never a cache to ship: the answers go stale at the next write.
 */
function answeredFromMemory(deps: RecallDeps, recorded: Map<string, Promise<unknown>>, variant: FreeVariant): RecallDeps {
  const lists = deps.recallLists;
  if (!lists) return deps;
  const { memories, timeRoute } = deps;
  const remembered =
    <I, O>(statement: string, ask: (input: I) => Promise<O>) =>
    (input: I): Promise<O> => {
      const key = `${statement} ${JSON.stringify(input)}`;
      if (!recorded.has(key)) recorded.set(key, ask(input));
      return recorded.get(key) as Promise<O>;
    };
  const everyStatement = variant === 'free-sql';
  return {
    ...deps,
    ...(everyStatement
      ? {
          memories: overriding(memories, { getActive: remembered('active', (input: Parameters<typeof memories.getActive>[0]) => memories.getActive(input)) }),
          timeRoute: overriding(timeRoute, { memoriesSaidIn: remembered('said', (input: Parameters<typeof timeRoute.memoriesSaidIn>[0]) => timeRoute.memoriesSaidIn(input)) }),
        }
      : {}),
    recallLists: overriding(lists, {
      ...(variant !== 'free-bm25' ? { memoryLists: remembered('lists', (input: Parameters<typeof lists.memoryLists>[0]) => lists.memoryLists(input)) } : {}),
      ...(variant !== 'free-lists' ? { bm25WithMemories: remembered('bm25', (input: Parameters<typeof lists.bm25WithMemories>[0]) => lists.bm25WithMemories(input)) } : {}),
    }),
  };
}

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Actual Rows': number; 'Actual Loops': number; 'Actual Total Time': number; 'Shared Hit Blocks'?: number; 'Shared Read Blocks'?: number; Plans?: PlanNode[] };

/** A plan as indented lines: each node's table or index, rows × loops, time and buffers. */
function planLines(n: PlanNode, depth: number): string[] {
  const buffers = (n['Shared Hit Blocks'] ?? 0) + (n['Shared Read Blocks'] ?? 0);
  return [
    `            ${'  '.repeat(depth)}${n['Node Type']} ${n['Relation Name'] ?? ''} ${n['Index Name'] ?? ''} rows ${n['Actual Rows']}×${n['Actual Loops']} ${fmt(n['Actual Total Time'])} buffers ${buffers}`,
    ...(n.Plans ?? []).flatMap((c) => planLines(c, depth + 1)),
  ];
}

/** A statement's name in the trace, from what it reads. */
function statementName(sql: string): string {
  if (sql.includes("'important' AS list")) return 'short lists';
  // The held working set's one statement (working-set-repository.ts) reads memory_terms too.
  if (sql.includes('recall_written_since')) return 'held set changes';
  if (sql.includes('episode_terms')) return 'episode bm25';
  if (sql.includes('memory_terms')) return 'memory bm25';
  if (sql.includes('message_terms') || sql.includes('message_postings')) return 'message bm25';
  if (sql.includes('CROSS JOIN LATERAL') && sql.includes('FROM messages')) return 'exchange neighbours';
  if (sql.includes('entities')) return 'graph seeds';
  if (sql.includes('unnest($2::uuid[])')) return 'ann hydrate';
  if (sql.includes('DISTINCT ON (m.created_at') || sql.includes('recall_said_in')) return 'time route';
  if (sql.includes('recall_top_by_type') || sql.includes('($4::text IS NULL OR scope = $4)')) return 'by types';
  if (sql.startsWith('SELECT id FROM memories')) return 'recent route';
  return sql.replace(/\s+/g, ' ').slice(0, 40);
}

/**
 * Where a warm recall's time goes, read the same way on a quiet or a busy machine: each
 * statement's steps inside `n` recalls — when recall asked for it ("sent at", from the recall's
 * start), the wait for a pool client, server + wire (until the first message of the answer is
 * handled: planning, execution, the network, and any event-loop delay), the rows (the rest of the
 * answer received and parsed) — beside the same statement with the same parameters replayed alone
 * right after its recall (so both see the same load), the Chroma query's span, the event loop's
 * delay over those recalls, and the short lists' server-side planning and execution alone
 * (EXPLAIN ANALYZE with the parameters of the last recall; it analyzes no table).
 */
export async function traceRecalls(deps: RecallDeps, pool: import('pg').Pool, user: string, now: Date, n: number, queries: readonly BenchQuery[] = PLAIN_QUERIES): Promise<void> {
  type Step = 'at' | 'wait' | 'server' | 'rows' | 'total';
  const inside = new Map<string, Record<Step, number[]>>();
  const alone = new Map<string, Record<Step, number[]>>();
  const chroma: { at: number[]; total: number[]; wire: number[]; answered: number[] } = { at: [], total: [], wire: [], answered: [] };
  // When the Chroma query's request is made and its answer's headers are parsed: how long the
  // request waits in the process before and after Chroma works on it. The Chroma client sends over
  // node:http (chroma-transport.ts), which publishes both; fetch's undici channels, read here until
  // 2026-12-04, no longer see it.
  const onSend = (message: unknown) => void (isChromaQuery(message) && chroma.wire.push(performance.now() - start));
  const onAnswer = (message: unknown) => void (isChromaQuery(message) && chroma.answered.push(performance.now() - start));
  diagnosticsChannel.subscribe('http.client.request.start', onSend);
  diagnosticsChannel.subscribe('http.client.response.finish', onAnswer);
  const add = (into: Map<string, Record<Step, number[]>>, t: StatementTiming, start: number) => {
    const name = statementName(t.text);
    const r = into.get(name) ?? { at: [], wait: [], server: [], rows: [], total: [] };
    r.at.push(t.requested - start);
    r.wait.push(t.acquired - t.requested);
    r.server.push(t.answered - t.acquired);
    r.rows.push(t.parsed - t.answered);
    r.total.push(t.parsed - t.requested);
    into.set(name, r);
  };
  let start = 0;
  const seen: StatementTiming[] = [];
  const restore = traceStatements(pool, (t) => seen.push(t));
  const chromaAlone: typeof chroma = { at: [], total: [], wire: [], answered: [] };
  let chromaArgs: Parameters<RecallDeps['vectors']['query']> | undefined;
  const vectors = Object.assign(Object.create(deps.vectors) as RecallDeps['vectors'], {
    query: async (...a: Parameters<RecallDeps['vectors']['query']>) => {
      chromaArgs = a;
      const t0 = performance.now();
      chroma.at.push(t0 - start);
      const out = await deps.vectors.query(...a);
      chroma.total.push(performance.now() - t0);
      return out;
    },
  });
  const traced = { ...deps, vectors };
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const recalls: number[] = [];
  const beforeYield: number[] = [];
  let last: StatementTiming | undefined;
  const lastOf = new Map<string, StatementTiming>();
  try {
    for (let i = 0; i < n; i++) {
      const q = queries[i % queries.length]!;
      seen.length = 0;
      loop.enable();
      start = performance.now();
      const running = recall(traced, user, q.query, recallOptions(q, now));
      // Until recall first yields, no statement can leave: the pool hands out clients on a later tick.
      beforeYield.push(performance.now() - start);
      await running;
      recalls.push(performance.now() - start);
      loop.disable();
      const ofRecall = [...seen];
      for (const t of ofRecall) add(inside, t, start);
      last = ofRecall.find((t) => statementName(t.text) === 'short lists') ?? last;
      for (const t of ofRecall) lastOf.set(statementName(t.text), t);
      for (const t of ofRecall) {
        seen.length = 0;
        const s = performance.now();
        await pool.query(t.text, t.values);
        add(alone, seen[0]!, s);
      }
      if (chromaArgs) {
        const [wire, answered] = [chroma.wire.length, chroma.answered.length];
        start = performance.now();
        await deps.vectors.query(...chromaArgs);
        chromaAlone.total.push(performance.now() - start);
        chromaAlone.wire.push(...chroma.wire.splice(wire));
        chromaAlone.answered.push(...chroma.answered.splice(answered));
        chromaArgs = undefined;
      }
    }
  } finally {
    restore();
    diagnosticsChannel.unsubscribe('http.client.request.start', onSend);
    diagnosticsChannel.unsubscribe('http.client.response.finish', onAnswer);
  }
  const p = (xs: number[]) => `${fmt(stats(xs).p50)}/${fmt(stats(xs).p95)}`;
  console.log(`        trace of ${n} warm recalls (p50/p95; recall ${p(recalls)}; its synchronous start ${p(beforeYield)}; event-loop delay p50 ${fmt(loop.percentile(50) / 1e6)} p99 ${fmt(loop.percentile(99) / 1e6)} max ${fmt(loop.max / 1e6)}):`);
  console.log('          (sent at: from the recall\'s start; server+wire: planning, execution, network and event-loop delay until the answer is read; alone: the same statement and parameters right after its recall)');
  console.log(`          ${'statement'.padEnd(20)} | inside a recall: sent at   wait for client  server+wire  rows   total | alone: server+wire  total`);
  for (const [name, r] of inside) {
    const a = alone.get(name);
    console.log(`          ${name.padEnd(20)} | ${p(r.at)}  ${p(r.wait)}  ${p(r.server)}  ${p(r.rows)}  ${p(r.total)} | ${a ? `${p(a.server)}  ${p(a.total)}` : '—'}`);
  }
  if (chroma.total.length > 0) {
    const wire = chroma.wire.length === chroma.total.length ? `  request made at ${p(chroma.wire)}  headers back at ${p(chroma.answered)}` : '';
    console.log(`          ${'chroma (memories)'.padEnd(20)} | asked at ${p(chroma.at)}${wire}  total ${p(chroma.total)}`);
    if (chromaAlone.total.length === chromaAlone.wire.length) console.log(`          ${'chroma alone'.padEnd(20)} | asked at 0  request made at ${p(chromaAlone.wire)}  headers back at ${p(chromaAlone.answered)}  total ${p(chromaAlone.total)}`);
  }
  // The plan of each statement whose replay alone took over 2 ms at the median: what the planner chose for rows it has no statistics on.
  for (const [name, instance] of lastOf) {
    const a = alone.get(name);
    if (!a || stats(a.server).p50 <= 2) continue;
    const { rows } = await pool.query<{ 'QUERY PLAN': { 'Planning Time': number; 'Execution Time': number; Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${instance.text}`, instance.values);
    const plan = rows[0]!['QUERY PLAN'][0]!;
    console.log(`          ${name}, its last instance alone, EXPLAIN ANALYZE: planning ${fmt(plan['Planning Time'])}, execution ${fmt(plan['Execution Time'])}`);
    console.log(planLines(plan.Plan, 0).join('\n'));
  }
  if (last) {
    const { rows } = await pool.query<{ 'QUERY PLAN': { 'Planning Time': number; 'Execution Time': number }[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${last.text}`, last.values);
    const plan = rows[0]!['QUERY PLAN'][0]!;
    console.log(`          short lists alone, EXPLAIN ANALYZE: planning ${fmt(plan['Planning Time'])}, execution ${fmt(plan['Execution Time'])}`);
    const analyzed = await pool.query<{ relname: string; at: Date | null }>(`SELECT relname, COALESCE(last_analyze, last_autoanalyze) AS at FROM pg_stat_user_tables WHERE relname IN ('memories', 'memory_terms', 'messages', 'episodes', 'entities') ORDER BY relname`);
    console.log(`          tables analyzed: ${analyzed.rows.map((r) => `${r.relname} ${r.at ? r.at.toISOString().slice(11, 19) : 'never'}`).join(', ')}`);
    if (plan['Execution Time'] > 2) console.log(planLines((plan as unknown as { Plan: PlanNode }).Plan, 0).join('\n'));
  }
}

/**
 * CPU time per warm recall and per raw Chroma query of the same k, by process, each over `n`
 * operations back to back: the recall's work is spread over this process, PostgreSQL's backends
 * and Chroma, and on two cores their sum, halved, is a floor under its latency that no reordering
 * inside a recall removes.
 */
async function cpuPerRecall(deps: RecallDeps, user: string, now: Date, n: number, queries: readonly BenchQuery[], queryVectors: Map<string, number[]>): Promise<void> {
  const measure = async (label: string, op: (q: BenchQuery) => Promise<unknown>) => {
    const before = cpuByProgram();
    const threadsBefore = cpuByThread();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await op(queries[i % queries.length]!);
    const wall = (performance.now() - t0) / n;
    const byThread = cpuPerOperation(threadsBefore, cpuByThread(), n);
    const per = cpuPerOperation(before, cpuByProgram(), n);
    const total = per.reduce((sum, x) => sum + x.ms, 0);
    console.log(`        cpu per ${label}: ${per.map((x) => `${x.program} ${fmt(x.ms)}`).join(', ')} | all ${fmt(total)} over wall ${fmt(wall)} (${(total / wall).toFixed(2)} cores busy)`);
    console.log(`          of which this process, by thread: ${byThread.map((x) => `${x.program} ${fmt(x.ms)}`).join(', ')}`);
  };
  await measure('warm recall', (q) => recall(deps, user, q.query, recallOptions(q, now)));
  await measure('chroma floor', (q) => deps.vectors.query({ userId: user, embedding: queryVectors.get(q.query)!, k: 20 }));
}

/** A profile's amounts (time or bytes) summed by file and by function, for the two profilers below. */
class ByCallSite {
  readonly byFile = new Map<string, number>();
  readonly byFunction = new Map<string, number>();

  add(frame: { functionName: string; url: string; lineNumber: number }, amount: number): void {
    const file = frame.url.replace(/^.*node_modules\//u, 'nm:').replace(/^.*\/(src|bench)\//u, '$1/') || frame.functionName || '(native)';
    const fn = `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
    this.byFunction.set(fn, (this.byFunction.get(fn) ?? 0) + amount);
    this.byFile.set(file, (this.byFile.get(file) ?? 0) + amount);
  }

  /** The 15 largest files, then the 25 largest functions, each amount shown by `show`. */
  print(show: (amount: number) => string): void {
    const top = (m: Map<string, number>, k: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k);
    for (const [name, amount] of top(this.byFile, 15)) console.log(`          ${show(amount).padStart(11)}  ${name}`);
    console.log('        by function:');
    for (const [name, amount] of top(this.byFunction, 25)) console.log(`          ${show(amount).padStart(11)}  ${name}`);
  }
}

/**
 * Bytes allocated by `n` warm recalls (V8's sampling heap profiler, one sample per 16 KiB on
 * average, keeping the objects minor and major GCs collected), per recall, by allocating function
 * and by file. Each MiB a recall allocates brings the next scavenge nearer, and a scavenge stops
 * every request in flight for its duration.
 */
async function allocationsOfRecalls(deps: RecallDeps, user: string, now: Date, n: number, queries: readonly BenchQuery[]): Promise<void> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  for (let i = 0; i < n; i++) {
    const q = queries[i % queries.length]!;
    await recall(deps, user, q.query, recallOptions(q, now));
  }
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  const { sites, total } = bytesBySite(profile.head as SampledNode);
  const kib = (bytes: number) => `${(bytes / n / 1024).toFixed(1)} KiB`;
  console.log(`        allocated by ${n} warm recalls: ${kib(total)} per recall (sampled, garbage included); by file:`);
  sites.print(kib);
}

type SampledNode = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: SampledNode[] };

/** A sampling heap profile's bytes, by call site. */
function bytesBySite(head: SampledNode): { sites: ByCallSite; total: number } {
  const sites = new ByCallSite();
  let total = 0;
  const walk = (node: SampledNode) => {
    if (node.selfSize > 0) {
      sites.add(node.callFrame, node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) walk(child);
  };
  walk(head);
  return { sites, total };
}

/** The timed loop's three operations on one query: the raw Chroma query, the SQL floor, the warm recall. */
interface LoopOperations {
  chromaFloor(q: BenchQuery): Promise<unknown>;
  sqlFloor(): Promise<unknown>;
  recall(q: BenchQuery): Promise<RecallResult>;
}

/**
 * The operations the timed loop interleaves, for `user`. The SQL floor reads 20 of the user's
 * memories by id ({@link SQL_FLOOR}), drawn from `ids` with `random`.
 */
function loopOperations(
  runtime: BenchStack['runtime'],
  deps: RecallDeps,
  user: string,
  now: Date,
  queryVectors: Map<string, number[]>,
  ids: readonly string[],
  random: () => number,
): LoopOperations {
  return {
    chromaFloor: (q) => runtime.deps.vectors.query({ userId: user, embedding: queryVectors.get(q.query)!, k: 20 }),
    sqlFloor: () => runtime.pool.query(SQL_FLOOR, [Array.from({ length: 20 }, () => ids[Math.floor(random() * ids.length)]!)]),
    recall: (q) => recall(deps, user, q.query, recallOptions(q, now)),
  };
}

/** The timed loop's three operations, named, each to run alone: what each one costs the collector. */
function operationsOfTheLoop(ops: LoopOperations): [string, (q: BenchQuery) => Promise<unknown>][] {
  return [
    ['chroma floor', ops.chromaFloor],
    ['sql floor', ops.sqlFloor],
    ['warm recall', ops.recall],
  ];
}

async function forThreeSeconds(op: (q: BenchQuery) => Promise<unknown>, queries: readonly BenchQuery[]): Promise<number> {
  const started = performance.now();
  let n = 0;
  for (; performance.now() - started < 3_000; n++) await op(queries[n % queries.length]!);
  return n;
}

/** Each operation of the timed loop alone for 3 s, announced on stderr so a `node --trace-gc-nvp` trace can be split by it. */
async function phasesForTheCollector(ops: LoopOperations, queries: readonly BenchQuery[]): Promise<void> {
  for (const [name, op] of operationsOfTheLoop(ops)) {
    console.error(`--- phase: ${name}`);
    const n = await forThreeSeconds(op, queries);
    console.error(`--- end of phase: ${name}, ${n} operations`);
  }
}

/**
 * Bytes that outlived a scavenge, per operation, by allocating function and file, for each
 * operation of the timed loop alone for 3 s (V8's sampling heap profiler, one sample per 4 KiB,
 * dropping what minor GCs collected). What survives one scavenge is copied, what survives two is
 * promoted: the cost of a scavenge follows these bytes, not the bytes allocated.
 */
async function survivorsOfOperations(ops: LoopOperations, queries: readonly BenchQuery[]): Promise<void> {
  const { Session } = await import('node:inspector/promises');
  for (const [name, op] of operationsOfTheLoop(ops)) {
    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: 4_096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
    const n = await forThreeSeconds(op, queries);
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    const { sites, total } = bytesBySite(profile.head as SampledNode);
    const per = (bytes: number) => `${(bytes / n / 1024).toFixed(2)} KiB`;
    console.log(`        ${name} alone, ${n} operations in 3 s: ${per(total)} per operation outlived a scavenge (sampled); by file:`);
    sites.print(per);
  }
}

/**
 * Self time of this process's functions over `n` warm recalls (node:inspector's sampling
 * profiler, 100 µs): the JavaScript a recall runs — segmentation, fusion, the budget cut,
 * formatting, the clients' parsing — against the idle time it waits for PostgreSQL and Chroma.
 */
export async function profileRecalls(deps: RecallDeps, user: string, now: Date, n: number, queries: readonly BenchQuery[] = PLAIN_QUERIES, outFile?: string): Promise<void> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  // Each recall's start, its Chroma answer's headers and its end, on the profiler's clock (both are
  // the monotonic clock in µs), to split its samples at the answer.
  const micros = () => Number(process.hrtime.bigint() / 1000n);
  const spans: { start: number; answer?: number; end: number }[] = [];
  const onAnswer = (message: unknown) => {
    const span = spans.at(-1);
    if (span && span.answer === undefined && isChromaQuery(message)) span.answer = micros();
  };
  diagnosticsChannel.subscribe('http.client.response.finish', onAnswer);
  await session.post('Profiler.start');
  const t0 = performance.now();
  try {
    for (let i = 0; i < n; i++) {
      const q = queries[i % queries.length]!;
      const span: (typeof spans)[number] = { start: micros(), end: Infinity };
      spans.push(span);
      await recall(deps, user, q.query, recallOptions(q, now));
      span.end = micros();
    }
  } finally {
    diagnosticsChannel.unsubscribe('http.client.response.finish', onAnswer);
  }
  const wall = performance.now() - t0;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  if (outFile) writeFileSync(outFile, JSON.stringify(profile));
  type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] };
  const nodes = new Map((profile.nodes as Node[]).map((x) => [x.id, x]));
  const parents = new Map<number, number>();
  for (const node of nodes.values()) for (const child of node.children ?? []) parents.set(child, node.id);
  const interval = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples?.length ?? 1);
  const sites = new ByCallSite();
  const owners = new Map<string, number>();
  const sides = new AnswerSides(spans);
  // After the answer, by the step of recall() running (inclusive), to see which stage to move or cut.
  const afterByStage = new Map<string, number>();
  // After the answer, self time by function: the pieces a cut there would take out.
  const afterSites = new ByCallSite();
  let idle = 0;
  let at = profile.startTime;
  (profile.samples ?? []).forEach((id, i) => {
    at += profile.timeDeltas?.[i] ?? 0;
    const node = nodes.get(id)!;
    const isIdle = node.callFrame.functionName === '(idle)';
    const side = sides.of(at);
    // Sides are short (0.6 ms after the answer): a sample there counts until the next one is taken,
    // not the run's mean interval, which a busy thread stretches.
    const lasted = (profile.timeDeltas?.[i + 1] ?? interval * 1000) / 1000;
    if (isIdle) {
      idle += interval;
      sides.add(side, 'idle', lasted);
      return;
    }
    sites.add(node.callFrame, interval);
    const stack: Node['callFrame'][] = [];
    for (let up: number | undefined = id; up !== undefined; up = parents.get(up)) stack.push(nodes.get(up)!.callFrame);
    const owner = ownerOf(stack);
    owners.set(owner, (owners.get(owner) ?? 0) + interval);
    sides.add(side, owner, lasted);
    if (side === 'after') {
      afterSites.add(node.callFrame, lasted);
      const stage = stageOf(stack);
      afterByStage.set(stage, (afterByStage.get(stage) ?? 0) + lasted);
    }
  });
  const per = (ms: number) => `${fmt(ms / n)}`;
  console.log(`        profile of ${n} warm recalls: ${fmt(wall / n)} per recall, of which this process was busy ${per(wall - idle)} (samples every 0.1 ms); self time per recall:`);
  sites.print(per);
  console.log('        by owner (a sample goes to the Chroma client or pg when one of theirs is on its stack, else to the nearest function of this project):');
  for (const [owner, ms] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`          ${per(ms).padStart(11)}  ${owner}`);
  sides.print(per);
  if (afterByStage.size > 0) {
    console.log("        after Chroma's answer, by the step of recall() on the stack (inclusive; 'outside recall()': promise jobs and callbacks with no recall frame, by the outermost function of ours):");
    for (const [stage, ms] of [...afterByStage].sort((a, b) => b[1] - a[1]).slice(0, 24)) console.log(`          ${per(ms).padStart(11)}  ${stage}`);
    console.log("        after Chroma's answer, self time by file and function:");
    afterSites.print(per);
  }
}

/** The function recall() (src/recall/recall.ts) was calling when a sample was taken, or recall's own code. */
function stageOf(stack: readonly { functionName: string; url: string; lineNumber: number }[]): string {
  const at = stack.findIndex((f) => f.functionName === 'recall' && f.url.endsWith('/src/recall/recall.ts'));
  if (at < 0) {
    // A continuation resumed by a promise job: named by the outermost function of this project
    // on the stack (the async function resumed), else by whose work it is.
    const outermost = stack.findLast((f) => /\/(?:src|activities|workflows)\//u.test(f.url) && !f.url.includes('node_modules'));
    return `outside recall(): ${outermost ? `${outermost.functionName || '(anonymous)'} ${outermost.url.replace(/^.*\/(src|activities|workflows)\//u, '$1/')}:${outermost.lineNumber + 1}` : ownerOf(stack)}`;
  }
  if (at === 0) return 'recall() itself';
  const callee = stack[at - 1]!;
  return `${callee.functionName || '(anonymous)'} ${callee.url.replace(/^.*\/(src|activities|workflows|node_modules)\//u, '$1/')}`;
}

/**
 * A profile's samples on either side of each recall's Chroma answer: before it, work that Chroma's
 * own work can hide (and the idle wait that shows how much); after it, work every recall waits
 * for. A recall whose query never reached Chroma, and time between recalls, count on neither side.
 */
class AnswerSides {
  private readonly starts: number[];
  private readonly ms = { before: new Map<string, number>(), after: new Map<string, number>() };
  private readonly walls = { before: 0, after: 0 };
  private readonly answered: number;

  constructor(private readonly spans: readonly { start: number; answer?: number; end: number }[]) {
    this.starts = spans.map((s) => s.start);
    for (const s of spans) {
      if (s.answer === undefined || !Number.isFinite(s.end)) continue;
      this.walls.before += (s.answer - s.start) / 1000;
      this.walls.after += (s.end - s.answer) / 1000;
    }
    this.answered = spans.filter((s) => s.answer !== undefined).length;
  }

  /** The side of the Chroma answer a sample taken at `micros` falls on. */
  of(micros: number): 'before' | 'after' | undefined {
    let low = 0;
    let high = this.starts.length - 1;
    if (high < 0 || micros < this.starts[0]!) return undefined;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.starts[mid]! <= micros) low = mid;
      else high = mid - 1;
    }
    const span = this.spans[low]!;
    if (span.answer === undefined || micros > span.end) return undefined;
    return micros < span.answer ? 'before' : 'after';
  }

  add(side: 'before' | 'after' | undefined, owner: string, ms: number): void {
    if (side) this.ms[side].set(owner, (this.ms[side].get(owner) ?? 0) + ms);
  }

  print(per: (ms: number) => string): void {
    if (this.answered === 0) return;
    for (const side of ['before', 'after'] as const) {
      const all = [...this.ms[side]];
      const busy = all.filter(([owner]) => owner !== 'idle').reduce((sum, [, ms]) => sum + ms, 0);
      console.log(`        ${side} Chroma's answer: ${per(this.walls[side])} per recall, busy ${per(busy)}, idle ${per(this.ms[side].get('idle') ?? 0)}; by owner:`);
      for (const [owner, ms] of all.filter(([o]) => o !== 'idle').sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`          ${per(ms).padStart(11)}  ${owner}`);
    }
  }
}

/**
 * Whose work a profile sample is: the Chroma client's or pg's when one of their frames (or our
 * adapters to them) is on the stack, whatever it called; else the nearest function of this
 * project; else the leaf (Node's own work: promise jobs, the collector, sockets).
 */
function ownerOf(stack: readonly { functionName: string; url: string }[]): string {
  if (stack.some((f) => /chromadb|chroma-transport|keep-alive-http|langchain-chroma/u.test(f.url))) return 'the Chroma client';
  if (stack.some((f) => /node_modules\/(?:pg|pg-protocol|pg-pool)\/|postgres\/pool\.ts/u.test(f.url))) return 'pg';
  const ours = stack.find((f) => /\/(?:src|activities|workflows)\//u.test(f.url) && !f.url.includes('node_modules'));
  if (ours) return `${ours.functionName || '(anonymous)'} ${ours.url.replace(/^.*\/(src|activities|workflows)\//u, '$1/')}`;
  return `${stack[0]?.functionName || '(anonymous)'} (Node)`;
}
