import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresGraphRecall } from '../src/adapters/postgres/graph-recall-repository';
import type { Queryable } from '../src/adapters/postgres/pool';
import { candidateKeys, canonicalEntity } from '../src/core/recall/graph';
import { graphRouteIds } from '../src/recall/graph-route';
import { createTestContext, type TestContext } from './support/harness';
import { seedMemories } from './support/seed';
import { readFileSync } from 'node:fs';
import { explainGeneric, sentStatement, type SentStatement } from './support/statements';

// The graph route's seeds come from an index lookup of the query's candidate keys, not from a scan
// of the user's entity names (which stopped at 2,000): the cost follows the query, and an entity
// created after the user's two-thousandth is found.
let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
  // Never analyzed, as a table is between its first rows and autovacuum's first pass: the lookup
  // must use the index without statistics.
  await ctx.runtime.pool.query('ALTER TABLE entities SET (autovacuum_enabled = false)');
});
afterAll(async () => {
  await ctx?.close();
});

const now = new Date('2026-06-02T00:00:00Z');
const FILLERS = 2_100;

async function link(user: string, memoryId: string, names: string[]): Promise<void> {
  await ctx.runtime.deps.unitOfWork.forUser({
    userId: user,
    work: async (tx) => tx.graph.link({ userId: user, memoryId, entities: names.map((name) => ({ name, kind: 'thing' })), relations: [] }),
  });
}

describe('graph route seeds by canonical key', () => {
  it('finds the entity a query names when the user has more than 2,000 and it was created last, through the index', async () => {
    const user = `${ctx.prefix}-many`;
    const [filler, zeppelin] = await seedMemories(ctx.runtime.deps, user, [
      { text: 'A long inventory of everything in the attic', type: 'fact' },
      { text: 'I flew on a Zeppelin over Lake Constance', type: 'preference' },
    ]);
    // Every filler sorts before "zeppelin" and sits on an active memory: the old scan's first 2,000.
    await link(user, filler!, Array.from({ length: FILLERS }, (_, i) => `item ${String(i).padStart(5, '0')}`));
    await link(user, zeppelin!, ['Zeppelin']);
    const { rows } = await ctx.runtime.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM entities WHERE user_id = $1', [user]);
    expect(rows[0]!.n).toBe(FILLERS + 1);

    const query = 'when did I fly on the zeppelin';
    expect(await graphRouteIds(ctx.runtime.deps.graphRecall!, { userId: user, query, now, k: 10 })).toEqual([zeppelin]);

    // The statement the route runs, captured and explained as it is.
    const seen: SentStatement[] = [];
    const recorder: Queryable = {
      query: ((first: unknown, second?: unknown) => {
        seen.push(sentStatement(first, second));
        return (ctx.runtime.pool.query as (...a: unknown[]) => unknown)(first, second);
      }) as Queryable['query'],
    };
    const found = await new PostgresGraphRecall(recorder).entitiesByKey({ userId: user, keys: candidateKeys(query), limit: 200 });
    expect(found.map((e) => e.name)).toEqual(['Zeppelin']);
    const stats = await ctx.runtime.pool.query<{ analyzed: boolean }>(
      `SELECT (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL) AS analyzed FROM pg_stat_user_tables WHERE relname = 'entities'`,
    );
    expect(stats.rows[0]?.analyzed).toBe(false);
    const plan = await ctx.runtime.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${seen[0]!.text}`, seen[0]!.values);
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    // The keys are an index condition, not a filter over every entity of the user.
    expect(text).toMatch(/Index Scan using entities_user_canonical_key_idx on entities[^\n]*\n\s*Index Cond: \(\(user_id = [^\n]*\) AND \(canonical_key = /u);
    expect(text).not.toMatch(/Seq Scan on entities|Filter: [^\n]*canonical_key/u);
    // Sent named (prepared.ts): the plan PostgreSQL may cache without the values reads the same index.
    const generic = JSON.stringify(await explainGeneric(ctx.runtime.pool, seen[0]!));
    expect(generic).toMatch(/"Index Name":\s*"entities_user_canonical_key_idx"/u);
    expect(generic).not.toMatch(/"Node Type":\s*"Seq Scan",[^}]*"Relation Name":\s*"entities"/u);
  });

  it('keys each entity by its canonical name, finds kinship through the key, and looks up only the asking user', async () => {
    const user = `${ctx.prefix}-keys`;
    const [mine] = await seedMemories(ctx.runtime.deps, user, [{ text: '我妈妈喜欢种花', type: 'preference' }]);
    await link(user, mine!, ['我妈妈', 'My Mom', '  Berlin ']);
    const { rows } = await ctx.runtime.pool.query<{ name: string; canonical_key: string }>('SELECT name, canonical_key FROM entities WHERE user_id = $1 ORDER BY name', [user]);
    for (const r of rows) expect(r.canonical_key).toBe(canonicalEntity(r.name));
    expect(await graphRouteIds(ctx.runtime.deps.graphRecall!, { userId: user, query: 'what does my mother like', now, k: 10 })).toEqual([mine]);
    // Another user's entities are never looked up.
    expect(await graphRouteIds(ctx.runtime.deps.graphRecall!, { userId: `${ctx.prefix}-other`, query: 'what does my mother like', now, k: 10 })).toEqual([]);
  });

  it('backfills rows written before the column with the same key canonicalEntity gives (the migration\'s SQL)', async () => {
    const labelled = readFileSync(new URL('./fixtures/entity-aliases/pairs.jsonl', import.meta.url), 'utf8')
      .split('\n')
      .filter((l) => l.trim().length > 0)
      .flatMap((l) => {
        const p = JSON.parse(l) as { a: string; b: string };
        return [p.a, p.b];
      });
    const names = [...labelled, '  My   Sister ', "Tom's", 'our folks', '我们的孩子', '我', 'USER', 'New  York', 'Москва', '哥伦比亚', '咱妈', 'your Bro', '\tBerlin\n', 'ΟΔΟΣ', '\u3000东京\u3000', 'ÉCOLE Ünter'];
    const { rows } = await ctx.runtime.pool.query<{ name: string; key: string }>('SELECT n AS name, entity_canonical_key(n) AS key FROM unnest($1::text[]) AS n', [names]);
    expect(rows.map((r) => [r.name, r.key])).toEqual(names.map((n) => [n, canonicalEntity(n)]));
  });
});
