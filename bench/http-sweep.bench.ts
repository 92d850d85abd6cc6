import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { uuidFromKey } from '../src/shared/ids';
import { recall } from '../src/recall/recall';
import { ensureDatabase } from '../src/stack/local-postgres';
import { chatConversation, chatMemory, chatQueries, prng } from './chat-corpus';
import { fmt, startApiProcess, startBenchStack, stats } from './support';
import { profileRecalls, traceRecalls } from './recall.bench';
import { loadUser } from './synthetic';
import { indexedOnThisThread } from '../test/support/indexed-messages';

/**
 * Recall over HTTP as production sees it (issue #22): an API process of its own (`src/cli/api.ts`,
 * `--api-in-process`: on this process's event loop instead) on the real stack, users with
 * 10k memories of generated bilingual multi-topic chat, their raw messages and exchange vectors
 * beside them, rows never analyzed (autovacuum off on the recall tables, no ANALYZE), every request
 * with `recentMessages`. A concurrency sweep (1, 4, 16, 64 clients, autocannon) gives throughput
 * and p50/p95/p99; the same sweep of raw Chroma queries (k = 20, the users' own collections, the
 * same query vectors) runs in the same process right after each step, as the floor. Degraded
 * answers (a recall whose `error` is set) are counted as errors, beside HTTP errors and timeouts.
 * `--quick`: one target user and 8 s per step; default: three target users and 20 s per step.
 * `--clients=1,16` runs only those steps; `--trace` and `--profile` show where the serial
 * in-process recalls spend their time, statement by statement and function by function.
 */
const KEY = `bench-${randomBytes(6).toString('hex')}`;
const TENANT = 'bench';

export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const targets = quick ? 1 : 3;
  const memoriesPerTarget = 10_000;
  const conversationsPerTarget = quick ? 300 : 600;
  const seconds = quick ? 8 : 20;
  // `--clients=1,16` runs only those steps; `--clients=` none (with --trace or --profile: only where the time goes).
  const clientsFlag = args.find((a) => a.startsWith('--clients='))?.slice('--clients='.length);
  const sweep = clientsFlag === undefined ? [1, 4, 16, 64] : clientsFlag.split(',').filter(Boolean).map(Number);
  // `--trace` / `--profile`: where the serial in-process recalls' time goes (recall.bench.ts), before the sweep.
  const trace = args.includes('--trace');
  const profile = args.includes('--profile');
  const apiInProcess = args.includes('--api-in-process');
  const overrides: Record<string, string> = {
    API_KEYS: `${TENANT}:${KEY}`,
    // The sweep measures recall, not the limiter: budgets far above what the run can spend.
    RATE_LIMIT_RECALL_PER_USER: '100000000',
    RATE_LIMIT_RECALL_PER_KEY: '100000000',
  };
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    const name = `bench_http_${randomBytes(3).toString('hex')}`;
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
    for (const table of ['memories', 'memory_terms', 'memory_term_df', 'user_index_stats', 'messages', 'message_terms', 'conversations']) await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    const rand = prng(7);
    // Real e5 vectors of a few hundred generated lines; each row gets a perturbed copy (embedding 30k texts would take the hour).
    const poolTexts = Array.from({ length: 256 }, () => chatMemory(rand).text);
    const vectors = await runtime.deps.embedder.embedDocuments({ texts: poolTexts });
    const texts = new Map<number, { text: string; type: import('../src/core/types').MemoryType }>();
    const textOf = (i: number) => {
      let t = texts.get(i);
      if (!t) texts.set(i, (t = chatMemory(prng(i))));
      return t;
    };
    const users = Array.from({ length: targets }, (_, u) => ({ external: `target-${u}`, key: runtime.subjects.userKey({ tenantId: TENANT, userId: `target-${u}` }) }));
    let t0 = performance.now();
    for (let o = 0; o < 10; o++) await loadUser(runtime, vectors, runtime.subjects.userKey({ tenantId: TENANT, userId: `other-${o}` }), 500, o * 500, textOf);
    for (const [u, user] of users.entries()) {
      await loadUser(runtime, vectors, user.key, memoriesPerTarget, 1_000_000 * (u + 1), textOf);
      await loadChat(runtime, vectors, user.key, conversationsPerTarget, 31 * (u + 1));
    }
    texts.clear();
    console.log(`loaded ${targets} users × ${memoriesPerTarget} memories and ${conversationsPerTarget} conversations (+10 others × 500) in ${((performance.now() - t0) / 1000).toFixed(1)} s, never analyzed`);

    // The API in a process of its own, as deployed; `--api-in-process`: on this process's event
    // loop beside autocannon, as before (each client's work then delays every answer).
    let baseUrl: string;
    let closeApi: () => Promise<void>;
    if (apiInProcess) {
      const api = await runtime.createApi({ taskQueue: bench.config.temporal.taskQueue });
      await api.listen({ host: '127.0.0.1', port: 0 });
      const address = api.server.address();
      baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      closeApi = () => api.close();
    } else {
      const logFile = join(tmpdir(), `jarvis-bench-api-${process.pid}.log`);
      ({ baseUrl, stop: closeApi } = await startApiProcess(bench, logFile));
      console.log(`API: its own process (src/cli/api.ts), log ${logFile}`);
    }
    try {
      const queries = chatQueries(48);
      const now = new Date().toISOString();
      const bodies = users.flatMap((u) => queries.map((q) => ({ path: `/v1/users/${u.external}/recall`, body: JSON.stringify({ query: q.query, recentMessages: q.recentMessages, now }) })));
      // Warm: every query embedded once (the embedder's cache), collections and plans loaded.
      t0 = performance.now();
      for (const b of bodies) {
        const res = await fetch(`${baseUrl}${b.path}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: b.body });
        if (res.status !== 200) throw new Error(`warm-up recall answered ${res.status}: ${await res.text()}`);
      }
      console.log(`warm-up: ${bodies.length} recalls in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      const queryVectors = await Promise.all(queries.map((q) => runtime.deps.embedder.embedQuery({ text: q.query })));
      // The same recalls in process, one at a time: what the HTTP layer (auth, limits, JSON) adds is the difference to the 1-client step.
      const inProcess: number[] = [];
      const recallNow = new Date(now);
      for (const [i, q] of queries.entries()) {
        const t = performance.now();
        const r = await recall(runtime.deps, users[i % users.length]!.key, q.query, { now: recallNow, recentMessages: q.recentMessages });
        inProcess.push(performance.now() - t);
        if (r.error) console.log(`in-process recall degraded: ${r.error.message}`);
      }
      const P = stats(inProcess);
      console.log(`in-process recall, serial, same queries: p50 ${fmt(P.p50)} p95 ${fmt(P.p95)} p99 ${fmt(P.p99)}`);
      if (trace) await traceRecalls(runtime.deps, db, users[0]!.key, recallNow, queries.length, queries);
      if (profile) await profileRecalls(runtime.deps, users[0]!.key, recallNow, queries.length * 2, queries);

      const rows: string[] = [];
      for (const connections of sweep) {
        const http = await httpStep(baseUrl, bodies, connections, seconds);
        const floor = await chromaStep(runtime, users.map((u) => u.key), queryVectors, connections, seconds);
        const H = stats(http.latencies);
        const F = stats(floor.latencies);
        rows.push(
          `| ${connections} | ${(http.latencies.length / seconds).toFixed(1)} | ${fmt(H.p50)} | ${fmt(H.p95)} | ${fmt(H.p99)} | ${http.errors} | ${(floor.latencies.length / seconds).toFixed(1)} | ${fmt(F.p50)} | ${fmt(F.p95)} | ${fmt(F.p99)} | ${floor.errors} | ×${(H.p95 / F.p95).toFixed(2)} |`,
        );
        console.log(rows.at(-1));
        console.log(`        routes p50/p95: ${[...(http.routes ?? [])].map(([name, ms]) => `${name} ${fmt(stats(ms).p50)}/${fmt(stats(ms).p95)}`).join(', ')}`);
      }
      console.log(`\nrecall over HTTP vs raw Chroma (k = 20), ${targets} × ${memoriesPerTarget} memories, never analyzed, ${seconds} s per step`);
      console.log('| clients | recall req/s | p50 | p95 | p99 | errors | chroma q/s | p50 | p95 | p99 | errors | recall/chroma p95 |');
      console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
      for (const r of rows) console.log(r);
    } finally {
      await closeApi();
    }
  } finally {
    await bench.stop();
  }
}

/** `conversations` generated chats for a user: messages with their BM25 postings, and one pair vector per exchange. */
async function loadChat(runtime: Awaited<ReturnType<typeof startBenchStack>>['runtime'], pool: number[][], userId: string, conversations: number, seed: number): Promise<void> {
  const rand = prng(seed);
  const start = Date.now() - 60 * 86_400_000;
  const items: { id: string; embedding: number[]; conversationId: string; messageId: string; unit: 'pair' }[] = [];
  for (let c = 0; c < conversations; c++) {
    const conversationId = `chat-${c}`;
    const at = start + c * 2 * 3_600_000;
    const lines = chatConversation(rand);
    await runtime.deps.conversations.append({
      userId,
      conversationId,
      messages: indexedOnThisThread(lines.map((l, i) => ({ id: `m${i}`, role: l.role, content: l.content, at: new Date(at + i * 30_000), truncated: false }))),
    });
    for (let i = 0; i + 1 < lines.length; i += 2) {
      items.push({ id: uuidFromKey(`bench-pair:${userId}:${conversationId}:${i}`), embedding: pool[Math.floor(rand() * pool.length)]!, conversationId, messageId: `m${i}`, unit: 'pair' });
    }
  }
  for (let i = 0; i < items.length; i += 2000) await runtime.deps.exchangeVectors!.upsert({ userId, items: items.slice(i, i + 2000) });
}

interface Step {
  latencies: number[];
  errors: number;
  /** Per route of the recall answers, the times the route reported (what a step waited on). */
  routes?: Map<string, number[]>;
}

/** One step of the sweep: `connections` autocannon clients posting recalls for `seconds`, bodies taken in turn. */
async function httpStep(baseUrl: string, bodies: { path: string; body: string }[], connections: number, seconds: number): Promise<Step> {
  const latencies: number[] = [];
  const routes = new Map<string, number[]>();
  let degraded = 0;
  let next = 0;
  let done!: (r: autocannon.Result) => void;
  let failed!: (err: unknown) => void;
  const finished = new Promise<autocannon.Result>((resolve, reject) => ((done = resolve), (failed = reject)));
  const instance = autocannon({
    url: baseUrl,
    connections,
    duration: seconds,
    timeout: 30,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => {
          const b = bodies[next++ % bodies.length]!;
          return { ...req, path: b.path, body: b.body };
        },
        onResponse: (status, body) => {
          if (status !== 200) return;
          const answer = JSON.parse(body) as { error?: unknown; routes?: { route: string; ms: number }[] };
          if (answer.error) degraded++;
          for (const r of answer.routes ?? []) routes.set(r.route, [...(routes.get(r.route) ?? []), r.ms]);
        },
      },
    ],
  }, (err, result) => (err ? failed(err) : done(result)));
  // Every response's time, so p95 is read from the samples (autocannon's summary has p90 and p97.5).
  instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await finished;
  return { latencies, errors: result.errors + result.timeouts + result.non2xx + degraded, routes };
}

/** The floor: `connections` loops of raw Chroma queries (k = 20) on the users' collections for `seconds`. */
async function chromaStep(runtime: Awaited<ReturnType<typeof startBenchStack>>['runtime'], users: string[], vectors: number[][], connections: number, seconds: number): Promise<Step> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const i = next++;
        const t0 = performance.now();
        try {
          await runtime.deps.vectors.query({ userId: users[i % users.length]!, embedding: vectors[i % vectors.length]!, k: 20 });
          latencies.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  return { latencies, errors };
}
