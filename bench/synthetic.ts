import type pg from 'pg';
import { normalizeFact } from '../src/core/extraction/offline-extractor';
import { uuidFromKey } from '../src/shared/ids';
import { termFrequencies } from '../src/core/text/tokenize';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import type { MemoryType } from '../src/core/types';
import type { Runtime } from '../src/runtime';

/**
 * Synthetic but realistic memory sets for benchmarks. Texts are composed from a bilingual
 * vocabulary (so BM25 postings have natural document frequencies); vectors are real e5
 * embeddings of a pool of sentences, perturbed per memory (so the ANN index has realistic
 * geometry without embedding 100k texts at ~30/s on this CPU).
 */
const SUBJECTS_ZH = ['花生', '咖啡', '杭州', '爬山', '论文', 'payment-svc', '寿司', '猫', '跑步', 'Rust', '面试', '预算', '健身', '会议', '报告', '旅行', '日语', '钢琴', '房租', '体检'];
const SUBJECTS_EN = ['peanuts', 'coffee', 'Berlin', 'hiking', 'thesis', 'payment-svc', 'sushi', 'my cat', 'running', 'Rust', 'the interview', 'budget', 'the gym', 'meetings', 'the report', 'travel', 'Japanese', 'piano', 'rent', 'checkup'];
const FRAMES_ZH = ['我喜欢{}', '我对{}过敏', '最近在忙{}', '{}总是让我很头疼', '我的目标是搞定{}', '我们决定先处理{}', '下周要处理{}', '我不太喜欢{}'];
const FRAMES_EN = ['I like {}', 'I am allergic to {}', 'lately busy with {}', '{} keeps bothering me', 'my goal is to finish {}', 'we decided to prioritise {}', 'next week I deal with {}', 'I do not enjoy {}'];
const TYPES: MemoryType[] = ['preference', 'fact', 'event', 'pain_point', 'goal', 'decision', 'event', 'preference'];

export function syntheticText(i: number): { text: string; type: MemoryType } {
  const zh = i % 2 === 0;
  const frames = zh ? FRAMES_ZH : FRAMES_EN;
  const subjects = zh ? SUBJECTS_ZH : SUBJECTS_EN;
  const f = (i >>> 1) % frames.length;
  const s1 = subjects[(i * 7) % subjects.length]!;
  const s2 = subjects[(i * 13 + 5) % subjects.length]!;
  const text = frames[f]!.replace('{}', s1) + (zh ? `，还有${s2}（#${i}）` : `, and ${s2} (#${i})`);
  return { text, type: TYPES[f]! };
}

export const BENCH_QUERIES = [
  '推荐个午餐', '我有什么过敏的东西吗', 'payment-svc 最近怎么样了', '这周末我该做什么', '我的目标是什么', '上次说的论文进度', '帮我安排一下跑步计划', '房租的事情怎么办',
  'what should I eat tonight?', 'am I allergic to anything?', 'how is payment-svc doing?', 'what are my goals?', 'plan my weekend', 'remind me about the interview', 'what bothers me lately?', 'budget advice please',
];

/** Real e5 vectors of `size` texts of a corpus (every third synthetic text by default): the pool loadUser perturbs a copy of for each memory. */
export async function embeddingPool(runtime: Runtime, size = 256, textOf: (i: number) => string = (i) => syntheticText(i * 3).text): Promise<number[][]> {
  const texts = Array.from({ length: size }, (_, i) => textOf(i));
  return runtime.deps.embedder.embedDocuments({ texts });
}

function perturb(base: number[], seed: number): number[] {
  let s = seed >>> 0;
  const v = base.map((x) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return x + ((s / 4294967296) - 0.5) * 0.04;
  });
  const norm = Math.sqrt(v.reduce((a, x) => a + x * x, 0));
  return v.map((x) => x / norm);
}

/**
 * How long ago memory `i` was said: spread evenly over 90 days whatever range of `i` a user gets
 * (a multiplicative hash), so the time and recency routes see a realistic history.
 */
function ageMs(i: number): number {
  return ((Math.imul(i, 2654435761) >>> 0) / 2 ** 32) * 90 * 86_400_000;
}

/**
 * Bulk-loads `count` active memories for `userId`: rows, BM25 postings, stats and vectors. Memory
 * `i` gets `textOf(i)` and a perturbed copy of `pool[i % pool.length]` as its vector.
 */
export async function loadUser(
  runtime: Runtime,
  pool: number[][],
  userId: string,
  count: number,
  offset = 0,
  textOf: (i: number) => { text: string; type: MemoryType } = syntheticText,
): Promise<void> {
  const db: pg.Pool = runtime.pool;
  await db.query(`INSERT INTO users (user_id, tenant_id, external_id) VALUES ($1, 'bench', $1) ON CONFLICT DO NOTHING`, [userId]);
  const now = Date.now();
  const BATCH = 2000;
  let totalLength = 0;
  for (let start = 0; start < count; start += BATCH) {
    const n = Math.min(BATCH, count - start);
    const rows = Array.from({ length: n }, (_, j) => {
      const i = offset + start + j;
      const { text, type } = textOf(i);
      const tokens = tokenizeForIndex(text);
      return { id: uuidFromKey(`bench:${userId}:${i}`), text, type, tokens, importance: ((i * 37) % 100) / 100, at: new Date(now - ageMs(i)) };
    });
    await db.query(
      `INSERT INTO memories (id, user_id, text, normalized_text, type, status, scope, confidence, importance, importance_level,
         frequency_count, decay_score, doc_length, created_at, updated_at, last_accessed_at, source)
       SELECT id, $1, text, norm, type, 'active', 'global', 0.9, imp,
              CASE WHEN imp >= 0.85 THEN 'critical' WHEN imp >= 0.7 THEN 'high' WHEN imp >= 0.4 THEN 'medium' ELSE 'low' END,
              1, 1, len, at, at, at, '{"via":"api","role":"user"}'::jsonb
         FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::real[], $7::int[], $8::timestamptz[]) AS x(id, text, norm, type, imp, len, at)
       ON CONFLICT DO NOTHING`,
      [userId, rows.map((r) => r.id), rows.map((r) => r.text), rows.map((r) => normalizeFact(r.text)), rows.map((r) => r.type), rows.map((r) => r.importance), rows.map((r) => r.tokens.length), rows.map((r) => r.at)],
    );
    const postings = rows.flatMap((r) => [...termFrequencies(r.tokens)].map(([term, tf]) => ({ id: r.id, term, tf, len: r.tokens.length })));
    await db.query(
      `INSERT INTO memory_terms (user_id, term, memory_id, tf, doc_length) SELECT $1, t, id, tf, len FROM unnest($2::text[], $3::uuid[], $4::int[], $5::int[]) AS x(t, id, tf, len) ON CONFLICT DO NOTHING`,
      [userId, postings.map((p) => p.term), postings.map((p) => p.id), postings.map((p) => p.tf), postings.map((p) => p.len)],
    );
    totalLength += rows.reduce((s, r) => s + r.tokens.length, 0);
    await runtime.deps.vectors.upsert({
      userId,
      items: rows.map((r, j) => ({ id: r.id, embedding: perturb(pool[(offset + start + j) % pool.length]!, offset + start + j), type: r.type, createdAt: r.at.toISOString() })),
    });
  }
  await db.query(
    `INSERT INTO user_index_stats (user_id, doc_count, total_length) VALUES ($1, $2, $3)
     ON CONFLICT (user_id) DO UPDATE SET doc_count = user_index_stats.doc_count + EXCLUDED.doc_count, total_length = user_index_stats.total_length + EXCLUDED.total_length`,
    [userId, count, totalLength],
  );
}

/**
 * Only behind a bench's `--analyze` flag: production never analyzes by hand, so the default run
 * measures rows the planner has no statistics for, as a new or fast-growing user's are (issue
 * #22). The flag is there to compare against the plans a fresh ANALYZE gives; recall-fresh
 * measures that gap on twins in one run.
 */
export async function analyzeAfterBulkLoad(runtime: Runtime): Promise<void> {
  for (const table of ['memories', 'memory_terms', 'user_index_stats']) await runtime.pool.query(`ANALYZE ${table}`);
}

/**
 * Bulk-loads `count` exchange vectors for `userId` (perturbed pool vectors, as for memories), so
 * the exchange vector route searches a collection of that size (pair vectors: recall reads no
 * line vectors). No message rows stand behind them:
 * what the route finds costs the hydration query and is then dropped, as a forgotten line would be.
 */
export async function loadExchangeVectors(runtime: Runtime, pool: number[][], userId: string, count: number, offset = 0): Promise<void> {
  const index = runtime.deps.exchangeVectors;
  if (!index) throw new Error('this runtime has no exchange vector index');
  const BATCH = 2000;
  for (let start = 0; start < count; start += BATCH) {
    const n = Math.min(BATCH, count - start);
    await index.upsert({
      userId,
      items: Array.from({ length: n }, (_, j) => {
        const i = offset + start + j;
        return { id: uuidFromKey(`bench-exchange:${userId}:${i}`), embedding: perturb(pool[(i * 5) % pool.length]!, i + 7), conversationId: `bench-${Math.floor(i / 50)}`, messageId: `m${i}`, unit: 'pair' as const };
      }),
    });
  }
}
