import { randomInt } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config';
import { createRuntime, type Runtime } from '../src/runtime';
import { ChaosCluster, CHAOS_KEY, type AppProcess } from './chaos-cluster';
import { activityTimes, cpuLine, cpuSeconds, temporalWork, trafficLine, WaitSampler } from './chaos-probe';
import { compareRuns, settled, type Findings, type RunUser } from './chaos-check';
import { buildScript, ChaosClient, newStats, playUser, rng, type ClientStats, type UserScript } from './chaos-script';
import { fmt, stats } from './support';

/**
 * Chaos: N users chat (zh/en), end conversations or leave them idle, store a memory, answer a
 * reminder (稍后, then 知道了) and recall, against two API processes and two workers, while at
 * seeded moments a worker, an API process, Chroma and the Temporal server are killed (SIGKILL)
 * and started again, and PostgreSQL cuts every app connection. After things settle the same script
 * run without faults is the reference: every message extracted once, the same memories, every due
 * reminder fired once, reminder rows = workflow state, PostgreSQL = Chroma.
 *
 *   npm run bench -- chaos [--quick] [--seed=N]     the chaos run; last line is the verdict
 *   npm run bench -- chaos --throughput [--quick]   sustained throughput with one vs two workers
 */

type Fault = 'worker' | 'api' | 'chroma' | 'temporal' | 'postgres';

const since = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;

const ENV = {
  CONVERSATION_IDLE_SECONDS: '4',
  EXTRACTION_RECONCILE_SECONDS: '10',
  OUTBOX_DRAIN_SECONDS: '10',
  OUTBOX_RETRY_BASE_SECONDS: '1',
  OUTBOX_RETRY_MAX_SECONDS: '5',
  TEMPORAL_CALL_TIMEOUT_MS: '3000',
  WORKFLOW_WAIT_TIMEOUT_MS: '10000',
  REMINDER_ACCEPT_TIMEOUT_MS: '5000',
};

export async function run(args: string[]): Promise<void> {
  const quick = args.includes('--quick');
  const seedArg = args.find((a) => a.startsWith('--seed='));
  const seed = seedArg ? Number(seedArg.slice('--seed='.length)) : randomInt(1, 2 ** 31 - 1);
  const dataDir = `.data/chaos-${process.pid}`;
  const cluster = new ChaosCluster(dataDir, ENV, args.includes('--throughput'));
  let runtime: Runtime | undefined;
  const t0 = performance.now();
  let verdict: string | undefined;
  let failed = false;
  try {
    await cluster.startStack();
    console.log(`[${since(t0)}] stack up: Temporal ${cluster.temporalAddress} (SQLite), PostgreSQL, Chroma ${cluster.chromaUrl} (persistent), embedder`);
    await cluster.startApps(2, 2);
    console.log(`[${since(t0)}] 2 API processes (${cluster.apis.map((a) => a.port).join(', ')}) and 2 workers up`);
    // The bench's own view of the stores, for the checks (reads only; same keys as the children).
    const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', TEMPORAL_NAMESPACE: 'jarvis-chaos', TEMPORAL_TASK_QUEUE: 'jarvis-chaos', CHROMA_COLLECTION: 'chaos', API_KEYS: `chaos:${CHAOS_KEY}`, ...ENV });
    runtime = await createRuntime(config, { temporalAddress: cluster.temporalAddress, databaseUrl: cluster.databaseUrl, chromaUrl: cluster.chromaUrl, embeddingsUrl: cluster.embeddingsUrl, dataDir: cluster.dataDir });

    if (args.includes('--throughput')) {
      await throughput(cluster, runtime, quick);
      return;
    }
    console.log(`seed ${seed} (replay with --seed=${seed})`);
    const script = buildScript(seed, quick ? { users: 8, conversations: 2, statementsPerConversation: 3 } : { users: 20, conversations: 4, statementsPerConversation: 3 });
    const messages = script.reduce((n, u) => n + u.actions.reduce((m, a) => m + (a.kind === 'messages' ? a.messages.length : 0), 0), 0);

    // 1. The reference: the same script, nothing killed.
    const refStats = newStats();
    let t = performance.now();
    const reference = await playAll(cluster, 'ref', script, refStats, seed);
    const refMs = performance.now() - t;
    console.log(`[${since(t0)}] reference run: ${script.length} users, ${messages} messages in ${(refMs / 1000).toFixed(1)} s; ${statusLine(refStats)}`);
    await settle(runtime, reference, 120_000, 'reference');

    // 2. The same script under faults, spread over about as long as the reference run took.
    const plan = faultPlan(seed, quick, Math.max(20_000, refMs));
    console.log(`fault plan: ${plan.map((f) => `${f.kind}@${(f.atMs / 1000).toFixed(1)}s`).join(', ')}`);
    const chaosStats = newStats();
    t = performance.now();
    const faultLog: string[] = [];
    const [chaos] = await Promise.all([playAll(cluster, 'cha', script, chaosStats, seed), inject(cluster, plan, seed, faultLog, t)]);
    console.log(`[${since(t0)}] chaos run: users done and ${faultLog.length} faults injected in ${since(t)}; ${statusLine(chaosStats)}`);
    for (const line of faultLog) console.log(`  ${line}`);
    for (const app of [...cluster.apis, ...cluster.workers]) if (app.down) await cluster.restartApp(app);
    await settle(runtime, chaos, quick ? 150_000 : 300_000, 'chaos');

    const findings = await compareRuns({ pool: runtime.pool, temporal: runtime.temporal, chromaUrl: cluster.chromaUrl, collectionPrefix: 'chaos' }, reference, chaos);
    report(findings, chaosStats, refStats, cluster);
    verdict = `chaos: ${script.length} users, ${messages} messages, ${faultLog.length} faults, lost ${findings.lost.length}, duplicated ${findings.duplicated.length}, diverged ${findings.diverged.length}`;
    failed = findings.lost.length + findings.duplicated.length + findings.diverged.length > 0;
  } finally {
    await runtime?.close().catch(() => {});
    await cluster.stop();
    if (!process.env.KEEP_CHAOS_DATA) await rm(dataDir, { recursive: true, force: true });
    else console.log(`data and logs kept in ${dataDir}`);
  }
  console.log(`[${since(t0)}] done`);
  if (verdict) console.log(verdict);
  if (failed) process.exitCode = 1;
}

function statusLine(s: ClientStats): string {
  const statuses = Object.entries(s.byStatus).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}×${v}`).join(' ');
  return `${s.requests} requests, ${s.attempts} attempts (${statuses})${s.gaveUp.length ? `, gave up ${s.gaveUp.length}` : ''}${s.unexpected.length ? `, unexpected ${s.unexpected.length}` : ''}`;
}

/** Every user of the script at once, under `prefix`; returns their keys and reminders. */
async function playAll(cluster: ChaosCluster, prefix: string, script: UserScript[], stats: ClientStats, seed: number): Promise<RunUser[]> {
  const urls = () => cluster.apis.map((a) => `http://127.0.0.1:${a.port}`);
  return Promise.all(
    script.map(async (user, i) => {
      const client = new ChaosClient(urls, CHAOS_KEY, stats, rng(seed * 31 + i));
      const userId = `${prefix}-${user.name}`;
      // Users start a little apart, as people do.
      await sleep(i * 150);
      const outcome = await playUser(client, userId, user);
      const who = await client.call('GET', `/v1/users/${userId}`, undefined);
      return { name: user.name, userKey: who.body.userKey as string, reminders: outcome.reminders };
    }),
  );
}

async function settle(runtime: Runtime, users: RunUser[], ms: number, what: string): Promise<void> {
  const t = performance.now();
  let state = await settled(runtime.pool, users.map((u) => u.userKey));
  while (!state.done && performance.now() - t < ms) {
    await sleep(1000);
    state = await settled(runtime.pool, users.map((u) => u.userKey));
  }
  console.log(`${what}: ${state.done ? 'settled' : 'NOT settled'} after ${since(t)} (${state.why})`);
}

function faultPlan(seed: number, quick: boolean, spanMs: number): { kind: Fault; atMs: number }[] {
  const r = rng(seed ^ 0x5eed);
  const kinds: Fault[] = quick ? ['worker', 'api', 'chroma', 'temporal', 'postgres', 'postgres'] : ['worker', 'api', 'chroma', 'temporal', 'postgres', 'worker', 'api', 'chroma', 'temporal', 'postgres', 'postgres', 'worker'];
  const shuffled = kinds.map((k) => ({ k, o: r() })).sort((a, b) => a.o - b.o).map((x) => x.k);
  const times = shuffled.map(() => Math.round(spanMs * (0.05 + 0.8 * r()))).sort((a, b) => a - b);
  return shuffled.map((kind, i) => ({ kind, atMs: times[i]! }));
}

/** Applies the plan in order: a kill, a few seconds down, a restart on the same port and data. */
async function inject(cluster: ChaosCluster, plan: { kind: Fault; atMs: number }[], seed: number, log: string[], start: number): Promise<void> {
  const r = rng(seed ^ 0xfa17);
  for (const { kind, atMs } of plan) {
    const wait = start + atMs - performance.now();
    if (wait > 0) await sleep(wait);
    const downMs = Math.round(1000 + r() * 3000);
    const t = performance.now();
    const at = `${((t - start) / 1000).toFixed(1)} s`;
    switch (kind) {
      case 'worker':
      case 'api': {
        const pool: AppProcess[] = kind === 'worker' ? cluster.workers : cluster.apis;
        const victim = pool[Math.floor(r() * pool.length)]!;
        await cluster.killApp(victim);
        await sleep(downMs);
        await restartUntilUp(cluster, victim);
        log.push(`${at}: SIGKILL ${kind}-${victim.index}, down ${(downMs / 1000).toFixed(1)} s, back after ${since(t)}`);
        break;
      }
      case 'chroma':
      case 'temporal':
        await cluster.killService(kind);
        await sleep(downMs);
        await cluster.startService(kind);
        log.push(`${at}: SIGKILL ${kind === 'temporal' ? 'Temporal dev server' : 'Chroma'}, down ${(downMs / 1000).toFixed(1)} s, back after ${since(t)}`);
        break;
      case 'postgres': {
        const n = await cluster.terminateBackends();
        log.push(`${at}: pg_terminate_backend on ${n} app connections`);
        break;
      }
    }
  }
}

/** A process that cannot start yet (e.g. Temporal is still coming back) is tried again, as a supervisor would. */
async function restartUntilUp(cluster: ChaosCluster, app: AppProcess): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await cluster.restartApp(app);
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
      await sleep(2000);
    }
  }
}

function report(f: Findings, chaos: ClientStats, ref: ClientStats, cluster: ChaosCluster): void {
  const rc = stats(chaos.recallMs);
  const rr = stats(ref.recallMs);
  console.log(`recall p50/p95: reference ${fmt(rr.p50)}/${fmt(rr.p95)}, under faults ${fmt(rc.p50)}/${fmt(rc.p95)} (${chaos.recallDegraded} of ${rc.n} degraded with an error)`);
  console.log(`process restarts: ${[...cluster.apis, ...cluster.workers].map((a) => `${a.kind}-${a.index} ${a.restarts}`).join(', ')}; crashes not caused by the bench: ${cluster.crashes.length}`);
  for (const c of cluster.crashes) console.log(`  crash: ${c}`);
  for (const g of chaos.gaveUp) console.log(`  gave up: ${g}`);
  for (const u of chaos.unexpected) console.log(`  unexpected: ${u}`);
  for (const [name, lines] of Object.entries(f)) for (const line of (lines as string[]).slice(0, 30)) console.log(`  ${name}: ${line}`);
}

// ─── Throughput: one worker against two ─────────────────────────────────────────────────────────

/**
 * Sustained load: conversations (3 statements + 3 replies, then an end call) posted by 6 loops
 * for a fixed window while 2 loops recall; messages/s counts messages ingested and extracted
 * (the clock stops when the last watermark reaches its conversation's newest message).
 */
async function throughput(cluster: ChaosCluster, runtime: Runtime, quick: boolean): Promise<void> {
  const windowMs = quick ? 20_000 : 60_000;
  // Warm-up, not measured: the bundles, connections, jieba, the embedder's first batches.
  await loadWindow(cluster, 'warm', quick ? 8_000 : 20_000);
  const rows: string[] = [];
  for (const workers of [1, 2]) {
    if (workers === 1) await cluster.stopApp(cluster.workers[1]!);
    else await cluster.restartApp(cluster.workers[1]!);
    const phaseStart = new Date();
    // What bounds it (bench/chaos-probe.ts): embedder traffic, CPU per process, PostgreSQL waits, activity times.
    cluster.embedderProxy?.take();
    const cpuBefore = cpuSeconds(cluster.processRoots());
    const waits = new WaitSampler(cluster.databaseUrl);
    waits.start();
    const measured = await loadWindow(cluster, `tp${workers}`, windowMs);
    const cpuAfter = cpuSeconds(cluster.processRoots());
    const waitLine = await waits.stop();
    const traffic = cluster.embedderProxy?.take();
    const times = await activityTimes(runtime.temporal, phaseStart);
    const work = await temporalWork(runtime.temporal, phaseStart, measured.messages);
    rows.push(
      `${workers} worker${workers > 1 ? 's' : ''}: ${measured.messages} messages in ${measured.conversations} conversations, ${(measured.messages / (measured.drainedMs / 1000)).toFixed(1)} messages/s ingested+extracted (all extracted ${(measured.drainedMs / 1000).toFixed(1)} s after the start of a ${windowMs / 1000} s window), POST …/messages p50/p95 ${fmt(measured.ingest.p50)}/${fmt(measured.ingest.p95)}; ${(measured.recall.n / (windowMs / 1000)).toFixed(1)} recalls/s, p50/p95 ${fmt(measured.recall.p50)}/${fmt(measured.recall.p95)}; activities by worker ${times.byWorker}`,
      `  ${cpuLine(cpuBefore, cpuAfter, measured.drainedMs, measured.messages)}`,
      `  ${work}`,
      ...(traffic ? [`  ${trafficLine(traffic, measured.drainedMs, measured.messages)}`] : []),
      `  ${waitLine}`,
      `  activities (sampled extraction runs): ${times.byType}`,
      `  extraction runs: ${times.perMessage}`,
    );
    for (const r of rows.slice(-7)) console.log(r);
  }
  // Recall alone (no ingestion): recalls/s at each concurrency, to find the rate that keeps p95 under 100 ms.
  for (const loops of [1, 2, 4]) {
    const r = await recallWindow(cluster, loops, quick ? 8_000 : 20_000);
    rows.push(`recall only, ${loops} in flight: ${r.perSecond.toFixed(1)} recalls/s, p50/p95 ${fmt(r.p50)}/${fmt(r.p95)}${r.p95 < 100 ? ' (p95 < 100 ms)' : ''}`);
    console.log(rows.at(-1));
  }
  console.log('\nthroughput (2 API processes; offline extractor; e5 embedder)');
  for (const r of rows) console.log(r);
}

/** Recalls over the users the load phases wrote, `loops` at a time, for `ms`. */
async function recallWindow(cluster: ChaosCluster, loops: number, ms: number) {
  const s = newStats();
  const urls = () => cluster.apis.map((a) => `http://127.0.0.1:${a.port}`);
  const queries = ['what am I allergic to?', '我住在哪里？', 'tell me about my pets', '我平时喜欢做什么？'];
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      const client = new ChaosClient(urls, CHAOS_KEY, s, rng(500 + loop));
      for (let n = 0; performance.now() < until; n++) {
        const res = await client.call('POST', `/v1/users/tp2-${n % 6}-u${(n + loop) % 12}/recall`, { query: queries[n % queries.length] });
        if (res.status === 200) s.recallMs.push(res.ms);
      }
    }),
  );
  return { ...stats(s.recallMs), perSecond: s.recallMs.length / (ms / 1000) };
}

async function loadWindow(cluster: ChaosCluster, prefix: string, windowMs: number) {
  const s = newStats();
  const urls = () => cluster.apis.map((a) => `http://127.0.0.1:${a.port}`);
  const script = buildScript(7, { users: 12, conversations: 1, statementsPerConversation: 3 });
  const ingestMs: number[] = [];
  let messages = 0;
  let conversations = 0;
  const keys = new Set<string>();
  const start = performance.now();
  const until = start + windowMs;
  const ingest = async (loop: number) => {
    const client = new ChaosClient(urls, CHAOS_KEY, s, rng(loop + 1));
    for (let n = 0; performance.now() < until; n++) {
      const user = script[(loop + n) % script.length]!;
      const userId = `${prefix}-${loop}-${user.name}`;
      const conversation = `c${n}`;
      const batch = user.actions.flatMap((a) => (a.kind === 'messages' ? a.messages : [])).map((m) => ({ ...m, id: `${conversation}-${m.id}` }));
      const res = await client.call('POST', `/v1/users/${userId}/conversations/${conversation}/messages`, { messages: batch });
      ingestMs.push(res.ms);
      messages += batch.length;
      conversations++;
      await client.call('POST', `/v1/users/${userId}/conversations/${conversation}/end`, {});
      if (!keys.has(userId)) keys.add(userId);
    }
  };
  const recalls = async (loop: number) => {
    const client = new ChaosClient(urls, CHAOS_KEY, s, rng(100 + loop));
    for (let n = 0; performance.now() < until; n++) {
      const res = await client.call('POST', `/v1/users/${prefix}-${n % 6}-u${n % 12}/recall`, { query: n % 2 ? 'what am I allergic to?' : '我住在哪里？' });
      if (res.status === 200) s.recallMs.push(res.ms);
    }
  };
  await Promise.all([...Array.from({ length: 6 }, (_, i) => ingest(i)), ...Array.from({ length: 2 }, (_, i) => recalls(i))]);
  // Drained: every conversation of this phase extracted up to its newest message.
  const client = new ChaosClient(urls, CHAOS_KEY, s, rng(999));
  const userKeys: string[] = [];
  for (const id of keys) userKeys.push((await client.call('GET', `/v1/users/${id}`, undefined)).body.userKey);
  const pool = new (await import('pg')).default.Pool({ connectionString: cluster.databaseUrl, max: 2 });
  try {
    for (;;) {
      const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM conversations WHERE user_id = ANY($1::text[]) AND last_seq > extracted_seq', [userKeys]);
      if (Number(rows[0]!.n) === 0 || performance.now() - start > windowMs * 10) break;
      await sleep(250);
    }
  } finally {
    await pool.end();
  }
  return { messages, conversations, drainedMs: performance.now() - start, ingest: stats(ingestMs), recall: stats(s.recallMs) };
}
