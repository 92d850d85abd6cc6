import { MockActivityEnvironment } from '@temporalio/testing';
import { createLifecycleActivities } from '../activities/lifecycle/lifecycle';
import { PostgresMemoryRepository } from '../src/adapters/postgres/memory-repository';
import { boundedQuery, inUserTransaction } from '../src/adapters/postgres/pool';
import type { LifecycleStepResult } from '../src/core/lifecycle/sweep';
import { importanceFor } from '../src/core/lifecycle/memory-importance';
import { memorySweepWorkflow } from '../workflows/lifecycle/memory-sweep';
import { fmt, startBenchStack, stats, timed } from './support';

/**
 * The daily forgetting sweep at scale (default 1,000,000 memories over 10,000 users; `--quick`
 * 100,000; `--size=N`), against a real PostgreSQL and Temporal:
 *   - the first sweep over a backlog (many archives/expiries), calling the activities directly;
 *   - a steady-state daily sweep (every decay score rewritten, few transitions), directly and
 *     through memorySweepWorkflow on a real worker (the Temporal overhead is the difference);
 *   - the same sweep again at the same instant (idempotent: nothing to write);
 * and the cost of recomputing importance on write: scoreImportance alone, and a real reinforce
 * transaction with and without the recompute. Prints numbers; asserts nothing.
 */

const DAY = 86_400_000;
const HARD_LIMIT_MS = 30 * 60_000;
/**
 * The bench's own bulk statements (load, VACUUM) run for minutes at a million rows: past the
 * pool's bound for one statement, which the sweep's statements keep.
 */
const LOAD_TIMEOUT_MS = HARD_LIMIT_MS;

/**
 * Loads `count` memories over `count / 100` users with set-based SQL (3 postings each), then,
 * with `analyze` (`--analyze`; production never analyses by hand), VACUUM ANALYZE. Foreign-key
 * triggers are off for the load only (the data is consistent by construction); every index is
 * maintained as in production.
 */
async function load(pool: import('pg').Pool, count: number, base: Date, analyze: boolean): Promise<void> {
  const users = Math.max(1, Math.floor(count / 100));
  const c = await pool.connect();
  const bulk = (text: string, values: unknown[] = []) => boundedQuery(c, text, values, LOAD_TIMEOUT_MS);
  try {
    await c.query('SET session_replication_role = replica');
    await bulk(`INSERT INTO users (user_id, tenant_id, external_id) SELECT 'bench-u' || g, 'bench', 'bench-u' || g FROM generate_series(0, $1::int - 1) g`, [users]);
    // Levels spread evenly; last access 0–200 days before `base`; 5 % events (expiring −20…+40
    // days around base), 5 % instructions, the rest facts. md5 ids scatter users over the id order.
    await bulk(
      `INSERT INTO memories (id, user_id, text, normalized_text, type, status, scope, confidence, importance, importance_level,
         importance_components, frequency_count, decay_score, doc_length, created_at, updated_at, last_accessed_at, expires_at, source)
       SELECT md5('bench' || g)::uuid, 'bench-u' || (g % $2::int), 'memory ' || g || ' about topic ' || (g % 97), 'memory ' || g,
              CASE g % 20 WHEN 0 THEN 'event' WHEN 1 THEN 'instruction' ELSE 'fact' END, 'active', 'global', 0.9,
              (ARRAY[0.2, 0.5, 0.75, 0.9])[1 + (g * 7) % 4], (ARRAY['low', 'medium', 'high', 'critical'])[1 + (g * 7) % 4],
              '{}'::jsonb, 1, 1, 3, la, la, la,
              CASE WHEN g % 20 = 0 THEN $3::timestamptz + (((g / 20) % 60) - 20) * interval '1 day' END, '{"via":"api"}'::jsonb
         FROM generate_series(0, $1::int - 1) g,
              LATERAL (SELECT $3::timestamptz - ((g::bigint * 7919) % (200 * 86400)) * interval '1 second' AS la) t`,
      [count, users, base],
    );
    await bulk(
      `INSERT INTO memory_terms (user_id, term, memory_id, tf, doc_length)
       SELECT user_id, term, id, 1, doc_length FROM memories, unnest(ARRAY['memory', 'topic', split_part(text, ' ', 5)]) AS term WHERE user_id LIKE 'bench-u%'`,
    );
    await bulk(
      `INSERT INTO user_index_stats (user_id, doc_count, total_length)
       SELECT user_id, count(*), sum(doc_length) FROM memories WHERE user_id LIKE 'bench-u%' GROUP BY user_id`,
    );
  } finally {
    c.release();
  }
  // Off by default, as in the other benches: production's sweep meets tables nobody analysed by hand.
  if (analyze) {
    await boundedQuery(pool, 'VACUUM ANALYZE memories', [], LOAD_TIMEOUT_MS);
    await boundedQuery(pool, 'VACUUM ANALYZE memory_terms', [], LOAD_TIMEOUT_MS);
  }
}

function summary(label: string, ms: number, scanned: number, r: Partial<LifecycleStepResult['counts']>): string {
  const rate = scanned / (ms / 1000);
  return `${label.padEnd(44)} ${(ms / 1000).toFixed(1).padStart(6)} s  ${Math.round(rate).toLocaleString('en-US').padStart(9)} memories/s  archived ${r.archived ?? 0}  expired ${r.expired ?? 0}  capacity ${r.capacityArchived ?? 0}  rows written ${r.updated ?? 0}  vectors ${r.vectorsRemoved ?? 0}`;
}

export async function run(args: string[]): Promise<void> {
  const killer = setTimeout(() => {
    console.error(`sweep benchmark exceeded ${HARD_LIMIT_MS / 60_000} min; stopping`);
    process.exit(1);
  }, HARD_LIMIT_MS);
  killer.unref();
  const sizeArg = args.find((a) => a.startsWith('--size='));
  const size = sizeArg ? Number(sizeArg.slice('--size='.length)) : args.includes('--quick') ? 100_000 : 1_000_000;
  const cap = 5000;
  // No embedding model is needed: the sweep deletes vectors by id and never embeds.
  const bench = await startBenchStack({ EMBEDDINGS_PROVIDER: 'hashing', SWEEP_BATCH_SIZE: '5000', MAX_ACTIVE_MEMORIES_PER_USER: String(cap) });
  const { runtime } = bench;
  const pool = runtime.pool;
  const taskQueue = `bench-sweep-${process.pid}`;
  const worker = await runtime.createWorker({ taskQueue });
  const running = worker.run();
  try {
    const base = new Date('2026-06-01T00:00:00Z');
    const [, loadMs] = await timed(() => load(pool, size, base, args.includes('--analyze')));
    console.log(`loaded ${size.toLocaleString('en-US')} memories (${Math.floor(size / 100).toLocaleString('en-US')} users, 3 postings each) in ${(loadMs / 1000).toFixed(1)} s`);

    const activities = createLifecycleActivities(runtime.deps);
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'bench-direct', runId: 'bench' } });
    const direct = async (now: Date) => {
      const input = { now: now.toISOString(), cursor: null, budgetMs: HARD_LIMIT_MS };
      const phases: [string, number, LifecycleStepResult][] = [];
      const phase = async (name: string, fn: () => Promise<LifecycleStepResult>) => {
        const [r, ms] = await timed(fn);
        phases.push([name, ms, r]);
      };
      await phase('decay', () => env.run(activities.sweepBatch, input));
      await phase('expireArchived', () => env.run(activities.expireArchivedBatch, input));
      await phase('capacity', () => env.run(activities.enforceCapacityBatch, input));
      await phase('vectors', () => env.run(activities.drainVectorDeletes, input));
      return phases;
    };
    // Between daily runs autovacuum reclaims yesterday's row versions; run it explicitly so each
    // measured day starts from the state a production table would be in.
    const vacuum = () => boundedQuery(pool, 'VACUUM memories', [], LOAD_TIMEOUT_MS);
    const report = (label: string, phases: [string, number, LifecycleStepResult][]) => {
      const total = phases.reduce((s, [, ms]) => s + ms, 0);
      const counts = phases.reduce((acc, [, , r]) => ({ ...acc, ...Object.fromEntries(Object.entries(r.counts).map(([k, v]) => [k, (acc[k as keyof typeof acc] ?? 0) + v])) }), {} as Record<string, number>);
      console.log(summary(label, total, phases[0]![2].counts.scanned, counts));
      console.log(`${''.padEnd(44)} ${phases.map(([n, ms]) => `${n} ${(ms / 1000).toFixed(1)} s`).join(', ')}`);
    };

    report('first sweep, backlog (activities directly)', await direct(new Date(base.getTime() + DAY)));
    await vacuum();
    report('daily sweep, steady state (directly)', await direct(new Date(base.getTime() + 2 * DAY)));
    await vacuum();

    const [wf, wfMs] = await timed(() =>
      runtime.temporal.workflow.execute(memorySweepWorkflow, { taskQueue, workflowId: `bench-sweep-${process.pid}`, args: [{ now: new Date(base.getTime() + 3 * DAY).toISOString() }] }),
    );
    console.log(summary('daily sweep, steady state (memorySweepWorkflow)', wfMs, wf.counts.scanned, wf.counts));
    console.log(`${''.padEnd(44)} ${wf.runs} run(s), ${wf.transitions.length} transitions listed${wf.transitionsTruncated ? ' (truncated)' : ''}`);
    report('same instant again (idempotent no-op)', await direct(new Date(base.getTime() + 3 * DAY)));

    // Importance on write: the pure score, and a real reinforce transaction with and without it.
    const sampleIds = (await pool.query<{ id: string; user_id: string }>(`SELECT id, user_id FROM memories WHERE status = 'active' ORDER BY md5(id::text) LIMIT 400`)).rows;
    const now = new Date(base.getTime() + 4 * DAY);
    const score: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const t0 = performance.now();
      importanceFor({ text: `我最近很担心预算的问题，这件事很重要 ${i}`, frequencyCount: i % 7, lastAccessedAt: new Date(now.getTime() - (i % 90) * DAY), now, associatedTopics: ['budget', 'work'], prior: 0.5 });
      score.push(performance.now() - t0);
    }
    const withScore: number[] = [];
    const without: number[] = [];
    for (const [i, row] of sampleIds.entries()) {
      const [, ms] = await timed(() =>
        inUserTransaction(pool, row.user_id, async (c) => {
          const memories = new PostgresMemoryRepository(c);
          if (i % 2 === 0) {
            const m = (await memories.get({ userId: row.user_id, id: row.id }))!;
            const imp = importanceFor({ text: m.text, frequencyCount: m.frequencyCount + 1, lastAccessedAt: now, now, associatedTopics: m.associatedTopics, prior: m.importance });
            await memories.reinforce({ userId: row.user_id, id: row.id, at: now, importance: imp.score, importanceLevel: imp.level, components: imp.components, recalled: true });
          } else {
            await memories.get({ userId: row.user_id, id: row.id });
            await c.query('UPDATE memories SET frequency_count = frequency_count + 1, last_accessed_at = $3 WHERE user_id = $1 AND id = $2', [row.user_id, row.id, now]);
          }
        }),
      );
      (i % 2 === 0 ? withScore : without).push(ms);
    }
    const S = stats(score);
    const W = stats(withScore);
    const O = stats(without);
    console.log(`importance recompute (importanceFor: emotion + score), ${S.n} calls: p50 ${(S.p50 * 1000).toFixed(1)} µs  p95 ${(S.p95 * 1000).toFixed(1)} µs`);
    console.log(`reinforce transaction with recompute + persisted components, ${W.n}: p50 ${fmt(W.p50)}  p95 ${fmt(W.p95)}`);
    console.log(`same transaction, plain counter UPDATE (floor), ${O.n}: p50 ${fmt(O.p50)}  p95 ${fmt(O.p95)}`);
  } finally {
    worker.shutdown();
    await running;
    await bench.stop();
    clearTimeout(killer);
  }
}
