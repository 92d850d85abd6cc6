import { PostgresConversationRepository, type IncomingMessage } from '../src/adapters/postgres/conversation-repository';
import { inTransaction } from '../src/adapters/postgres/pool';
import type { Runtime } from '../src/runtime';
import { syncEpisodeVectors, writeEpisodes } from '../src/conversation/episodes';
import { EPISODIC_ROUTES, recall, type RecallRoute } from '../src/recall/recall';
import { fmt, startBenchStack, stats, timed, type Stats } from './support';
import { analyzeAfterBulkLoad, BENCH_QUERIES, embeddingPool, loadUser, syntheticText } from './synthetic';
import { indexedOnThisThread } from '../test/support/indexed-messages';

/**
 * Recall latency with and without the episodic routes (time route, past exchanges, episodes),
 * which must not slow the hot path noticeably, for one user with 10k memories and months of raw
 * conversations, against real Chroma and PostgreSQL. Both variants run the same queries
 * interleaved in the same run; the target is p95 with the episodic routes within 20 % of p95
 * without them.
 */
const BASE_ROUTES: RecallRoute[] = ['ann', 'bm25', 'recent', 'important', 'type'];
const ALL_ROUTES: RecallRoute[] = [...BASE_ROUTES, ...EPISODIC_ROUTES];

/** Queries that switch the episodic routes on (a date, or a reference to the shared past). */
const EPISODIC_QUERIES = [
  '我6月2号那天做了什么', '上周三我们聊了什么', '你之前给我推荐过什么', '前几天说的那个论文',
  'what did I do last Tuesday?', 'what did you suggest last time?', 'the thing I mentioned yesterday', 'do you remember the budget advice?',
];

const SUBJECTS = ['咖啡', '杭州', '爬山', '论文', 'payment-svc', '寿司', '跑步', 'Rust', '面试', '预算', 'hiking', 'the report', 'piano', 'rent'];

/** `days` conversations, one a day ending at `end`, of `perDay` messages alternating user/assistant. */
async function loadConversations(runtime: Runtime, userId: string, days: number, perDay: number, end: Date): Promise<string[]> {
  const ids: string[] = [];
  for (let d = 0; d < days; d++) {
    const conversationId = `day-${d}`;
    const start = end.getTime() - (days - d) * 86_400_000 + 9 * 3_600_000;
    const messages: IncomingMessage[] = Array.from({ length: perDay }, (_, i) => {
      const n = d * perDay + i;
      const subject = SUBJECTS[(n * 5 + d) % SUBJECTS.length]!;
      const content =
        i % 2 === 0
          ? `${syntheticText(n).text}。今天顺便聊了${subject}。`
          : n % 4 === 1
            ? `推荐你试试和${subject}相关的《指南第${n % 50}版》，每天练习20分钟。`
            : `I'd suggest looking at ${subject} again next week, step 1: write down the plan.`;
      return { id: `m${i}`, role: i % 2 === 0 ? 'user' : 'assistant', content, at: new Date(start + i * 60_000), truncated: false };
    });
    await inTransaction(runtime.pool, (c) => new PostgresConversationRepository(c).append({ userId, conversationId, messages: indexedOnThisThread(messages) }));
    ids.push(conversationId);
  }
  return ids;
}

function row(label: string, w: Stats, wo: Stats): string {
  return `${label.padEnd(22)} | with p50 ${fmt(w.p50)} p95 ${fmt(w.p95)} | without p50 ${fmt(wo.p50)} p95 ${fmt(wo.p95)} | p95 ×${(w.p95 / wo.p95).toFixed(2)} (${((w.p95 / wo.p95 - 1) * 100).toFixed(0)} %)`;
}

export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  // Off by default: production never runs ANALYZE by hand (analyzeAfterBulkLoad).
  const analyze = args.includes('--analyze');
  const memories = 10_000;
  const days = quick ? 60 : 180;
  const perDay = 24;
  const rounds = quick ? 4 : 12;
  const bench = await startBenchStack();
  try {
    const { runtime } = bench;
    const user = 'episodic-target';
    const pool = await embeddingPool(runtime);
    let t0 = performance.now();
    await loadUser(runtime, pool, user, memories, 0);
    if (analyze) await analyzeAfterBulkLoad(runtime);
    const end = new Date();
    const conversations = await loadConversations(runtime, user, days, perDay, end);
    console.log(`loaded ${memories} memories and ${days * perDay} messages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    t0 = performance.now();
    // Episodes as ExtractMemories writes them, but their vectors in one batch at the end (the set-up
    // is not what is measured, and the embedder is far faster per text in batches).
    for (const conversationId of conversations) await writeEpisodes({ ...runtime.deps, episodeVectors: undefined }, { userId: user, conversationId });
    while ((await syncEpisodeVectors(runtime.deps, user, [], 16)).upserted > 0);
    console.log(`wrote ${conversations.length} episodes (summaries, postings, vectors) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const queries = [...BENCH_QUERIES, ...EPISODIC_QUERIES];
    for (const q of queries) await runtime.deps.embedder.embedQuery({ text: q }); // warm the query cache: both variants reuse it
    for (const q of queries) {
      await recall(runtime.deps, user, q, { now: end, routes: ALL_ROUTES });
      await recall(runtime.deps, user, q, { now: end, routes: BASE_ROUTES });
    }
    const samples = { with: { plain: [] as number[], episodic: [] as number[] }, without: { plain: [] as number[], episodic: [] as number[] } };
    let exchangesInjected = 0;
    for (let r = 0; r < rounds; r++) {
      for (const q of queries) {
        const kind = EPISODIC_QUERIES.includes(q) ? 'episodic' : 'plain';
        // Alternate which variant goes first so neither always enjoys a warmer cache.
        const order = (r + queries.indexOf(q)) % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const);
        for (const variant of order) {
          const [result, ms] = await timed(() => recall(runtime.deps, user, q, { now: end, routes: variant === 'with' ? ALL_ROUTES : BASE_ROUTES }));
          if (result.error) throw new Error(`recall degraded during the benchmark: ${result.error.message}`);
          if (variant === 'with' && result.pastExchanges.length > 0) exchangesInjected++;
          samples[variant][kind].push(ms);
        }
      }
    }
    const all = (v: 'with' | 'without') => [...samples[v].plain, ...samples[v].episodic];
    console.log(`\nrecall latency, ${memories} memories + ${days * perDay} messages + ${days} episodes for one user (${rounds} rounds × ${queries.length} queries)`);
    console.log(row('all queries', stats(all('with')), stats(all('without'))));
    console.log(row('plain queries', stats(samples.with.plain), stats(samples.without.plain)));
    console.log(row('date / shared-past', stats(samples.with.episodic), stats(samples.without.episodic)));
    console.log(`past exchanges injected in ${exchangesInjected} of ${rounds * queries.length} recalls with the episodic routes`);
  } finally {
    await bench.stop();
  }
}
