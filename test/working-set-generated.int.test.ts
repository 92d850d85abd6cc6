import { describe, expect, it } from 'vitest';
import { tokenizeForIndex } from '../src/adapters/text/jieba';
import { MEMORY_TYPES } from '../src/core/memory-types';
import type { MemoryStatus, MemoryType } from '../src/core/types';
import { recall } from '../src/recall/recall';
import type { RecallOptions } from '../src/recall/recall-request';
import { ALL_ROUTES } from '../src/core/recall/routes';
import { useTestContext } from './support/harness';
import { seedMemories, type SeedMemory } from './support/seed';
import { heldAndSql } from './support/working-set';

/*
 * The held working set and the SQL statements are two readers of one truth; test/working-set.int.test.ts
 * compares them on a fixed bilingual user. Here the user, the queries and the writes between
 * recalls are generated from a seed: every memory type, status, scope, importance, expiry and
 * pending state, queries with and without a type filter, a route subset, recent messages, a
 * topK and a token budget, and rounds of writes by other connections (status through the
 * repository, as the lifecycle and conflict resolution change it; importance, expiry, pending,
 * scope and recency by plain SQL, as an operator might; new memories) after which both readers
 * must still agree.
 *
 * What keeps the comparison exact rather than approximate: every memory has its own token
 * length and its own minute, and importances are drawn from a continuum, so no two memories tie
 * on any key either reader orders by; a tie would be broken by id on both sides, but a BM25 sum
 * added up in another order can split a tie by one unit in the last place.
 */
const stack = useTestContext({ RECALL_TIMEOUT_MS: '20000' });

const NOW = new Date('2026-06-10T00:00:00Z');
const SEED = Number(process.env.WORKING_SET_SEED ?? 20261203);

function random(seed: number): (n?: number) => number {
  let state = seed >>> 0;
  // mulberry32: small, seedable, and its low bits are as good as its high ones.
  return (n?: number) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return n === undefined ? u : Math.floor(u * n);
  };
}

const WORDS = [
  'coffee', 'oat milk', 'green tea', 'peanuts', 'allergy', 'penicillin', 'marathon', 'knee', 'physio', 'migraine',
  'Lisbon', 'Kyoto', 'Denver', 'sister', 'brother', 'daughter', 'nurse', 'cello', 'piano', 'guitar',
  'payment-svc', 'timeout', 'postgres', 'deploy', 'standup', 'roadmap', 'budget', 'invoice', 'laptop', 'printer',
  'vegetarian', 'sugar', 'dentist', 'passport', 'visa', 'flight', 'hotel', 'birthday', 'wedding', 'gym',
  '花生', '过敏', '咖啡', '绿茶', '马拉松', '膝盖', '偏头痛', '杭州', '出差', '客户',
  '妹妹', '女儿', '钢琴', '数据库', '超时', '上线', '预算', '发票', '护照', '签证',
  '航班', '酒店', '生日', '婚礼', '健身房', '牙医', '素食', '早起', '跑步', '学习',
];
const GLUE = ['I', 'my', 'the', 'with', 'in', 'and', 'since', 'every', 'week', 'again', '我', '的', '在', '和', '每天', '最近'];
const STATUSES: MemoryStatus[] = ['active', 'active', 'active', 'active', 'archived', 'superseded', 'expired'];

function sentence(next: (n?: number) => number, words: number): string {
  const parts: string[] = [];
  for (let i = 0; i < words; i++) parts.push(next(3) === 0 ? GLUE[next(GLUE.length)]! : WORDS[next(WORDS.length)]!);
  return parts.join(' ');
}

/** `count` memories with distinct token lengths, minutes and importances, of every type and state. */
function generateMemories(next: (n?: number) => number, count: number, firstMinute: number, usedLengths: Set<number>): SeedMemory[] {
  const out: SeedMemory[] = [];
  for (let attempt = 0; out.length < count && attempt < count * 200; attempt++) {
    const text = sentence(next, 2 + next(14 + usedLengths.size));
    const length = tokenizeForIndex(text).length;
    if (length === 0 || usedLengths.has(length)) continue;
    usedLengths.add(length);
    const expiry = next(6);
    out.push({
      text,
      type: MEMORY_TYPES[next(MEMORY_TYPES.length)] as MemoryType,
      status: STATUSES[next(STATUSES.length)]!,
      scope: next(5) === 0 ? 'task' : 'global',
      importance: 0.05 + next() * 0.9,
      at: new Date(Date.UTC(2026, 4, 1, 0, firstMinute + out.length * 7)),
      // Past, a day ahead, or none: the readers must agree on what has expired by NOW.
      expiresAt: expiry === 0 ? new Date(NOW.getTime() - 3_600_000 * (1 + next(48))) : expiry === 1 ? new Date(NOW.getTime() + 86_400_000) : null,
      pending: next(6) === 0,
    });
  }
  expect(out.length).toBe(count);
  return out;
}

function generateQuery(next: (n?: number) => number): { text: string; options: RecallOptions } {
  const options: RecallOptions = { now: NOW, topK: 3 + next(12) };
  if (next(3) === 0) options.types = [...new Set(Array.from({ length: 1 + next(3) }, () => MEMORY_TYPES[next(MEMORY_TYPES.length)] as MemoryType))];
  if (next(3) === 0) options.routes = [...new Set(Array.from({ length: 1 + next(3) }, () => ALL_ROUTES[next(ALL_ROUTES.length)]!))];
  if (next(3) === 0) options.recentMessages = [sentence(next, 3 + next(6)), sentence(next, 2 + next(5))];
  if (next(4) === 0) options.tokenBudget = 80 + next(400);
  return { text: sentence(next, 1 + next(5)), options };
}

const answer = (r: Awaited<ReturnType<typeof recall>>) => ({
  memories: r.memories.map((m) => [m.id, m.text, m.type, m.scope, m.routes, Number(m.score.toFixed(9))]),
  context: r.context,
  error: r.error,
});

describe('recall from a held working set, on generated users, queries and writes', () => {
  it(`answers as the SQL statements do before and after rounds of writes by other connections (seed ${SEED})`, { timeout: 600_000 }, async () => {
    const { ctx } = stack;
    const next = random(SEED);
    const key = ctx.userKey(`${ctx.prefix}-generated`);
    const usedLengths = new Set<number>();
    await seedMemories(ctx.runtime.deps, key, generateMemories(next, 60, 0, usedLengths));

    const deps = ctx.runtime.deps;
    const { held, sql, cache } = await heldAndSql(deps, ctx.runtime.pool, key, NOW);

    const queries = Array.from({ length: 24 }, () => generateQuery(next));
    let answered = 0;
    const compareAll = async (round: number): Promise<void> => {
      const heldBefore = cache.reads.held;
      for (const q of queries) {
        const bySql = await recall(sql, key, q.text, q.options);
        const byHeld = await recall(held, key, q.text, q.options);
        expect(answer(byHeld), `round ${round}: ${q.text} ${JSON.stringify(q.options)}`).toEqual(answer(bySql));
        if (bySql.memories.length > 0) answered += 1;
      }
      // Every recall of the round read the held set: a fallback to SQL would compare SQL with itself.
      expect(cache.reads.held - heldBefore, `round ${round}`).toBe(queries.length);
    };
    await compareAll(0);

    const pool = ctx.runtime.pool;
    let minute = 60 * 24 * 20; // after every seeded minute, so recency moves
    for (let round = 1; round <= 3; round++) {
      const { rows } = await pool.query<{ id: string; text: string }>('SELECT id, text FROM memories WHERE user_id = $1 ORDER BY id', [key]);
      for (let i = 0; i < 12; i++) {
        const { id, text } = rows[next(rows.length)]!;
        const at = new Date(Date.UTC(2026, 4, 1, 0, (minute += 7)));
        switch (next(6)) {
          case 0: {
            // Through the repository: a status change moves the postings and the index statistics with it.
            const status = STATUSES[next(STATUSES.length)]!;
            await deps.unitOfWork.forUser({ userId: key, work: (tx) => tx.memories.setStatus({ userId: key, id, status, at, tokens: tokenizeForIndex(text) }) });
            break;
          }
          case 1: {
            const importance = 0.05 + next() * 0.9;
            const level = importance >= 0.85 ? 'critical' : importance >= 0.7 ? 'high' : importance >= 0.4 ? 'medium' : 'low';
            await pool.query('UPDATE memories SET importance = $2, importance_level = $3, updated_at = $4 WHERE id = $1', [id, importance, level, at]);
            break;
          }
          case 2:
            await pool.query('UPDATE memories SET expires_at = $2, updated_at = $3 WHERE id = $1', [id, next(2) === 0 ? new Date(NOW.getTime() - 60_000) : null, at]);
            break;
          case 3:
            await pool.query('UPDATE memories SET pending = NOT pending, updated_at = $2 WHERE id = $1', [id, at]);
            break;
          case 4:
            await pool.query(`UPDATE memories SET scope = CASE scope WHEN 'task' THEN 'global' ELSE 'task' END, updated_at = $2 WHERE id = $1`, [id, at]);
            break;
          default:
            await pool.query('UPDATE memories SET updated_at = $2 WHERE id = $1', [id, at]);
        }
      }
      // New memories by the write path, in the same transaction shape as extraction's.
      await seedMemories(deps, key, generateMemories(next, 4, (minute += 60), usedLengths));
      expect(cache.isHeld(key), `round ${round}`).toBe(true);
      await compareAll(round);
    }
    // The generator must make the readers return something, or the comparison proves nothing.
    expect(answered).toBeGreaterThan(queries.length * 2);
  });
});
