import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryClient } from '../src/client/index';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';

// The graph over exchanges on the real stack: the exchange indexer links each line to the
// entities it names, and conversation search's graph sub-route (exchange_graph) finds a line
// naming an entity said beside the one the query names — through the graph, not the words —
// for this user only; erasing a message and purging the user leave no link behind.

let ctx: TestContext;
let client: MemoryClient;
beforeAll(async () => {
  ctx = await createTestContext({ RECALL_TIMEOUT_MS: '20000' });
  client = new MemoryClient({ baseUrl: ctx.baseUrl, apiKey: TEST_KEY });
});
afterAll(async () => {
  await ctx?.close();
});

const at = (iso: string, plusSeconds = 0) => new Date(new Date(iso).getTime() + plusSeconds * 1000).toISOString();

async function say(user: string, conversation: string, startIso: string, lines: [role: 'user' | 'assistant', content: string][]): Promise<void> {
  await client.addMessages(
    user,
    conversation,
    lines.map(([role, content], i) => ({ id: `${conversation}-m${i + 1}`, role, content, at: at(startIso, i * 30) })),
  );
}

async function indexerTick(tag: string): Promise<{ failed: number }> {
  return ctx.runtime.temporal.workflow.execute('exchangeIndexWorkflow', { taskQueue: ctx.taskQueue, workflowId: `${ctx.prefix}-graph-index-${tag}`, args: [{}] });
}

async function links(user: string): Promise<string[]> {
  const { rows } = await ctx.runtime.pool.query<{ link: string }>(
    "SELECT entity_key || '@' || message_id AS link FROM exchange_entities WHERE user_id = $1 ORDER BY 1",
    [ctx.userKey(user)],
  );
  return rows.map((r) => r.link);
}

describe('the graph over exchanges', () => {
  const alice = 'graph-alice';
  const bob = 'graph-bob';

  it('links each line to the entities it names', { timeout: 180_000 }, async () => {
    await say(alice, 'a-spring', '2026-03-01T09:00:00Z', [
      ['user', 'My sister moved to Lisbon with Ana last spring.'],
      ['assistant', 'That is a big move, how is she finding it?'],
    ]);
    await say(alice, 'a-summer', '2026-06-01T09:00:00Z', [
      ['user', 'Guess what, yesterday Ana opened her ceramics studio downtown.'],
      ['assistant', 'Wonderful news, congratulations to her!'],
    ]);
    // Bob says the same things: his lines name the same entities and must never answer Alice.
    await say(bob, 'b-spring', '2026-03-01T09:00:00Z', [['user', 'My sister moved to Lisbon with Ana last spring.']]);
    await say(bob, 'b-summer', '2026-06-01T09:00:00Z', [['user', 'Guess what, yesterday Ana opened her ceramics studio downtown.']]);
    expect((await indexerTick('1')).failed).toBe(0);
    const named = ['ana@a-spring-m1', 'ana@a-summer-m1', 'kin:sister@a-spring-m1', 'lisbon@a-spring-m1'];
    expect(await links(alice)).toEqual(expect.arrayContaining(named));
    expect(await links(bob)).toEqual(expect.arrayContaining(named.map((l) => l.replace('@a-', '@b-'))));
    // Nothing of what is only said, not named: no greeting, no assistant's filler.
    expect((await links(alice)).filter((l) => /guess|what|wonderful|congrat/u.test(l))).toEqual([]);
  });

  it('finds a line naming an entity said beside the one the query names, through exchange_graph, and never another user\'s line', { timeout: 60_000 }, async () => {
    const search = await client.searchConversations(alice, { query: 'what is new with my sister', maxLines: 6, now: '2026-07-01T10:00:00Z' });
    const graph = search.routes.find((r) => r.route === 'exchange_graph');
    expect(graph, JSON.stringify(search.routes)).toMatchObject({ ok: true });
    expect(graph!.hits).toBeGreaterThanOrEqual(2);
    const studio = search.exchanges.find((x) => x.user?.id === 'a-summer-m1');
    expect(studio, JSON.stringify(search.exchanges.map((x) => [x.user?.text ?? x.assistant?.text, x.routes]))).toBeDefined();
    expect(studio!.routes).toContain('exchange_graph');
    expect(search.exchanges.filter((x) => x.conversationId.startsWith('b-'))).toEqual([]);
  });

  it('finds nothing through the graph for a query naming no entity of the user', { timeout: 60_000 }, async () => {
    const search = await client.searchConversations(alice, { query: 'what did my brother say about Porto', maxLines: 6, now: '2026-07-01T10:00:00Z' });
    expect(search.routes.find((r) => r.route === 'exchange_graph')).toMatchObject({ ok: true, hits: 0 });
  });

  it('links the lines of a conversation indexed before the graph existed, and both watermarks end at its last message', { timeout: 180_000 }, async () => {
    const carol = 'graph-carol';
    await say(carol, 'c-old', '2026-02-01T09:00:00Z', [
      ['user', 'My brother Tomas just started as a nurse in Porto.'],
      ['assistant', 'Congratulations to him!'],
    ]);
    expect((await indexerTick('carol-1')).failed).toBe(0);
    const linked = await links(carol);
    expect(linked).toEqual(expect.arrayContaining(['porto@c-old-m1', 'tomas@c-old-m1']));
    // The state migration 1797300000000 leaves a conversation indexed before the graph in: its
    // lines embedded (exchange watermark at its last message), none linked (link watermark 0).
    await ctx.runtime.pool.query('DELETE FROM exchange_entities WHERE user_id = $1', [ctx.userKey(carol)]);
    await ctx.runtime.pool.query('UPDATE conversations SET entities_linked_seq = 0 WHERE user_id = $1', [ctx.userKey(carol)]);
    const vectorsBefore = await ctx.runtime.pool.query<{ seq: string }>('SELECT exchanges_indexed_seq AS seq FROM conversations WHERE user_id = $1', [ctx.userKey(carol)]);
    const tick = await indexerTick('carol-2');
    expect(tick.failed).toBe(0);
    expect(await links(carol)).toEqual(linked);
    const { rows } = await ctx.runtime.pool.query<{ indexed: string; linked: string }>(
      'SELECT exchanges_indexed_seq AS indexed, entities_linked_seq AS linked FROM conversations WHERE user_id = $1',
      [ctx.userKey(carol)],
    );
    expect(rows[0]).toEqual({ indexed: vectorsBefore.rows[0]!.seq, linked: vectorsBefore.rows[0]!.seq });
  });

  it('drops the links of an erased message, and every link of a purged user', { timeout: 180_000 }, async () => {
    const before = await links(bob);
    await ctx.runtime.pool.query('DELETE FROM messages WHERE user_id = $1 AND conversation_id = $2', [ctx.userKey(bob), 'b-summer']);
    const after = await links(bob);
    expect(after).toEqual(before.filter((l) => !l.endsWith('@b-summer-m1')));
    expect(after.length).toBeGreaterThan(0);
    const res = await ctx.call('DELETE', `/v1/users/${alice}?wait=true`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await links(alice)).toEqual([]);
    expect(await links(bob)).toEqual(after);
  });
});
