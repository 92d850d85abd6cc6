import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXCHANGES_HEADER, MEMORIES_HEADER } from '../src/core/recall/format';
import { checkScenario, formatReport, ingestScenario, summarize, type ScenarioOutcome } from '../src/eval/runner';
import { contains, loadScenarios, type Scenario } from '../src/eval/scenarios';
import { OTHER_TENANT_KEY, useTestContext } from './support/harness';

// Correctness, not latency, is tested here: a shared 2-core machine can make one e5 call slow.
const stack = useTestContext({ RECALL_TIMEOUT_MS: '20000' });

// The shared set's in-repo copy (test/fixtures/eval/README.md): never a path outside the repository.
const SHARED_EPISODIC = fileURLToPath(new URL('./fixtures/eval/episodic.jsonl', import.meta.url));
const HELD_OUT = fileURLToPath(new URL('./fixtures/episodic-heldout.jsonl', import.meta.url));

/** Scenarios are independent users: ingest a few at a time (the embedder serialises anyway). */
async function ingestAll(scenarios: Scenario[], runId: string, concurrency = 3): Promise<void> {
  const queue = [...scenarios];
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let s = queue.shift(); s; s = queue.shift()) await ingestScenario(stack.client, s, runId);
  }));
}

async function evaluate(path: string, runId: string): Promise<{ scenarios: Scenario[]; outcomes: ScenarioOutcome[]; report: string }> {
  const scenarios = loadScenarios(path);
  await ingestAll(scenarios, runId);
  const outcomes: ScenarioOutcome[] = [];
  for (const s of scenarios) outcomes.push(await checkScenario(stack.client, s, runId, 'fused'));
  return { scenarios, outcomes, report: formatReport(path.split('/').pop()!, summarize(outcomes)) };
}

/** Scenarios whose checks pass with the memory routes alone (the episodic routes off). */
async function passingWithoutEpisodic(scenarios: Scenario[], runId: string): Promise<number> {
  let passed = 0;
  for (const s of scenarios) {
    let ok = true;
    for (const c of s.checks) {
      const r = await stack.client.recall(`${runId}-${c.user}`, { query: c.query, now: c.at, routes: ['ann', 'bm25', 'recent', 'important', 'type'] });
      const context = `${r.context.system}\n${r.context.userPrefix}`;
      ok &&= c.expect.every((group) => group.some((x) => contains(context, x))) && !c.forbid.some((x) => contains(context, x));
    }
    if (ok) passed++;
  }
  return passed;
}

const at = (iso: string, plusSeconds = 0) => new Date(new Date(iso).getTime() + plusSeconds * 1000).toISOString();

async function converse(user: string, conversation: string, startIso: string, lines: [role: 'user' | 'assistant', content: string][]): Promise<string[]> {
  const messages = lines.map(([role, content], i) => ({ id: `${conversation}-m${i + 1}`, role, content, at: at(startIso, i * 30) }));
  await stack.client.addMessages(user, conversation, messages);
  await stack.client.endConversation(user, conversation, { wait: true });
  return messages.map((m) => m.id);
}

describe('episodic evaluation on the real stack', () => {
  it('passes the shared episodic.jsonl in full', { timeout: 600_000 }, async () => {
    const { outcomes, report } = await evaluate(SHARED_EPISODIC, `${stack.ctx.prefix}sh`);
    console.log(report);
    expect(outcomes.length).toBeGreaterThanOrEqual(6);
    expect(outcomes.filter((o) => !o.passed).map((o) => o.id), report).toEqual([]);
  });

  it('passes at least 95% of the held-out episodic scenarios (zh + en)', { timeout: 600_000 }, async () => {
    const runId = `${stack.ctx.prefix}ho`;
    const { scenarios, outcomes, report } = await evaluate(HELD_OUT, runId);
    const withoutEpisodic = await passingWithoutEpisodic(scenarios, runId);
    console.log(`${report}\nwithout the episodic routes: ${withoutEpisodic}/${scenarios.length}`);
    const tags = new Set(outcomes.flatMap((o) => o.tags));
    expect(outcomes.length).toBeGreaterThanOrEqual(10);
    for (const t of ['zh', 'en', 'assistant', 'temporal']) expect(tags).toContain(t);
    const passed = outcomes.filter((o) => o.passed).length;
    expect(passed / outcomes.length, report).toBeGreaterThanOrEqual(0.95);
    // The set is not answerable from distilled memories alone: the episodic routes make the difference.
    expect(withoutEpisodic).toBeLessThan(passed);
  });
});

describe('episodes', () => {
  it('ExtractMemories writes one episode per conversation-day, idempotently, with the workflow that wrote it', async () => {
    const user = `${stack.ctx.prefix}-ep`;
    await stack.client.addMessages(user, 'warmup', [{ id: 'w1', role: 'user', content: 'hi', at: '2026-05-01T00:00:00Z' }]);
    await stack.ctx.runtime.pool.query(`UPDATE users SET timezone = 'Asia/Shanghai' WHERE user_id = $1`, [stack.ctx.userKey(user)]);
    await converse(user, 'trip', '2026-05-20T23:59:00+08:00', [
      ['user', '晚上在鼓浪屿吃了一碗沙茶面，特别地道。'],
      ['assistant', '鼓浪屿的小吃确实有名。'],
      ['user', '明天一早打算去日光岩看日出。'],
      ['assistant', '推荐你五点半前出发，日光岩山顶的观景台位置最好。'],
    ]);
    const { rows } = await stack.ctx.runtime.pool.query(
      `SELECT id, to_char(day, 'YYYY-MM-DD') AS day, summary, message_ids, workflow_id, run_id, updated_at, vector_hash = content_hash AS synced
         FROM episodes WHERE user_id = $1 AND conversation_id = 'trip' ORDER BY day`,
      [stack.ctx.userKey(user)],
    );
    expect(rows.map((r) => r.day)).toEqual(['2026-05-20', '2026-05-21']);
    expect(rows[0].message_ids).toEqual(['trip-m1', 'trip-m2']);
    expect(rows[1].message_ids).toEqual(['trip-m3', 'trip-m4']);
    expect(rows[0].summary).toContain('鼓浪屿');
    expect(rows[0].summary).not.toContain('确实有名');
    expect(rows[1].summary).toContain('日光岩');
    for (const r of rows) {
      expect(r.workflow_id).toBe(stack.ctx.extractWorkflowId(user, 'trip'));
      expect(r.run_id).toBeTruthy();
      expect(r.synced).toBe(true);
    }
    const postings = await stack.ctx.runtime.pool.query('SELECT count(*)::int AS n FROM episode_terms WHERE user_id = $1', [stack.ctx.userKey(user)]);
    expect(postings.rows[0].n).toBeGreaterThan(0);
    const embedding = await stack.ctx.runtime.deps.embedder.embedQuery({ text: '鼓浪屿 沙茶面' });
    const hits = await stack.ctx.runtime.deps.episodeVectors!.query({ userId: stack.ctx.userKey(user), embedding, k: 5 });
    expect(hits.map((h) => h.id)).toContain(rows[0].id);

    // Ending again (a re-run) rewrites nothing: same ids, untouched rows.
    await stack.client.endConversation(user, 'trip', { wait: true });
    const again = await stack.ctx.runtime.pool.query(`SELECT id, updated_at FROM episodes WHERE user_id = $1 AND conversation_id = 'trip' ORDER BY day`, [stack.ctx.userKey(user)]);
    expect(again.rows.map((r) => r.id)).toEqual(rows.map((r) => r.id));
    expect(again.rows.map((r) => r.updated_at.getTime())).toEqual(rows.map((r) => r.updated_at.getTime()));
  });

  it('keeps message BM25 statistics in step with the postings (triggers)', async () => {
    const user = `${stack.ctx.prefix}-stats`;
    await stack.client.addMessages(user, 's1', [
      { id: 'a', role: 'user', content: 'The cabin wifi is PineLodge5G', at: '2026-05-01T00:00:00Z' },
      { id: 'b', role: 'assistant', content: 'Noted the cabin wifi.', at: '2026-05-01T00:00:10Z' },
    ]);
    await stack.client.addMessages(user, 's1', [{ id: 'a', role: 'user', content: 'The cabin wifi is PineLodge5G', at: '2026-05-01T00:00:00Z' }]);
    const stats = await stack.ctx.runtime.pool.query('SELECT doc_count::int, total_length::int FROM message_index_stats WHERE user_id = $1', [stack.ctx.userKey(user)]);
    const truth = await stack.ctx.runtime.pool.query(
      'SELECT count(DISTINCT message_id)::int AS docs, sum(tf)::int AS len FROM message_terms WHERE user_id = $1',
      [stack.ctx.userKey(user)],
    );
    expect(stats.rows[0]).toEqual({ doc_count: truth.rows[0].docs, total_length: truth.rows[0].len });
    const lengths = await stack.ctx.runtime.pool.query('SELECT message_id, doc_length FROM messages WHERE user_id = $1 ORDER BY message_id', [stack.ctx.userKey(user)]);
    expect(lengths.rows.every((r) => r.doc_length > 0)).toBe(true);
  });
});

describe('recall with the episodic routes', () => {
  it('injects dated past exchanges after the memories and lists the injected messages', async () => {
    const user = `${stack.ctx.prefix}-past`;
    const ids = await converse(user, 'books', '2026-08-03T21:00:00+08:00', [
      ['user', '最近想读点科幻小说，有推荐吗？'],
      ['assistant', '可以试试刘慈欣的《三体》三部曲，还有他的《球状闪电》。'],
    ]);
    const r = await stack.client.recall(user, { query: '你之前给我推荐过什么书？', now: '2026-08-20T12:00:00+08:00', timeZone: 'Asia/Shanghai' });
    expect(r.error).toBeUndefined();
    expect(r.pastExchanges.length).toBeGreaterThan(0);
    expect(r.pastExchanges[0]!.messageIds).toEqual(ids);
    expect(r.pastExchanges[0]!.conversationId).toBe('books');
    expect(r.injectedMessageIds).toEqual(expect.arrayContaining(ids));
    const prefix = r.context.userPrefix;
    expect(prefix.indexOf(EXCHANGES_HEADER)).toBeGreaterThan(prefix.indexOf(MEMORIES_HEADER));
    expect(prefix).toMatch(/- 2026-08-03 用户: 最近想读点科幻小说/u);
    expect(r.routes.map((x) => x.route)).toContain('exchange_bm25');

    // Without the episodic routes recall is what it was: no exchanges, no zone lookups.
    const plain = await stack.client.recall(user, { query: '你之前给我推荐过什么书？', now: '2026-08-20T12:00:00+08:00', routes: ['ann', 'bm25', 'recent', 'important', 'type'] });
    expect(plain.pastExchanges).toEqual([]);
    expect(plain.injectedMessageIds).toEqual([]);
    expect(plain.context.userPrefix).not.toContain(EXCHANGES_HEADER);
  });

  it('ranks what was said on the named date first, and leaves the time route off without a date', async () => {
    const user = `${stack.ctx.prefix}-date`;
    await converse(user, 'tue', '2026-09-08T19:30:00Z', [['user', 'Made mushroom risotto tonight, first time, turned out creamy!'], ['assistant', 'Nice work, risotto takes patience.']]);
    await converse(user, 'thu', '2026-09-10T19:30:00Z', [['user', 'Made grilled salmon with lemon tonight.'], ['assistant', 'Simple is often best with good fish.']]);
    const dated = await stack.client.recall(user, { query: 'What did I cook last Tuesday?', now: '2026-09-14T12:00:00Z', timeZone: 'UTC' });
    expect(dated.dateRanges).toEqual([{ text: 'last Tuesday', start: '2026-09-08T00:00:00.000Z', end: '2026-09-09T00:00:00.000Z' }]);
    expect(dated.pastExchanges[0]!.userText).toContain('risotto');
    if (dated.memories.length > 0) expect(dated.memories[0]!.text).toContain('risotto');
    expect(dated.routes.map((x) => x.route)).toEqual(expect.arrayContaining(['time', 'exchange_time']));

    const undated = await stack.client.recall(user, { query: 'what fish do I like?', now: '2026-09-14T12:00:00Z', timeZone: 'UTC' });
    expect(undated.dateRanges).toBeUndefined();
    expect(undated.routes.map((x) => x.route)).not.toContain('time');
  });

  it('falls back to raw exchanges when no memory answers, with keyword evidence only', async () => {
    const user = `${stack.ctx.prefix}-weak`;
    await converse(user, 'cabin', '2026-07-01T10:00:00Z', [
      ['user', 'The wifi at the lake cabin is PineLodge5G, password on the fridge.'],
      ['assistant', 'Good to know.'],
    ]);
    const r = await stack.client.recall(user, { query: 'lake cabin wifi name', now: '2026-07-20T10:00:00Z' });
    expect(r.error).toBeUndefined();
    expect(r.context.userPrefix).toContain('PineLodge5G');
    expect(r.pastExchanges).toHaveLength(1);
    expect(r.pastExchanges[0]!.routes).toContain('exchange_bm25');
    // Evidence needs shared words: a vector-only episode hit contributes no exchange.
    expect(r.pastExchanges.every((x) => x.routes.includes('exchange_bm25'))).toBe(true);
    const unrelated = await stack.client.recall(user, { query: 'recommend a dessert recipe', now: '2026-07-20T10:00:00Z' });
    expect(unrelated.context.userPrefix).not.toContain('PineLodge5G');
  });
});

describe('conversation search (L0)', () => {
  it('returns exchanges with their dates, the named date first', async () => {
    const user = `${stack.ctx.prefix}-l0`;
    await converse(user, 'c1', '2026-10-20T21:00:00+01:00', [
      ['user', 'We tried a Georgian place called Chito on Main Street tonight, the khachapuri was unreal.'],
      ['assistant', 'Khachapuri is the best. Glad you found a good spot.'],
    ]);
    await converse(user, 'c2', '2026-10-18T12:00:00+01:00', [
      ['user', 'Lunch at a ramen place near the office, the broth was too salty.'],
      ['assistant', 'Maybe ask for less tare next time.'],
    ]);
    const res = await stack.ctx.call('POST', `/v1/users/${user}/conversations/search`, {
      query: 'the restaurant I mentioned yesterday',
      now: '2026-10-21T18:00:00+01:00',
      timeZone: 'Europe/London',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const first = res.body.exchanges[0];
    expect(first.conversationId).toBe('c1');
    expect(first.inRange).toBe(true);
    expect(first.date).toBe('2026-10-20T20:00:00.000Z');
    expect(first.user).toEqual({ id: 'c1-m1', text: expect.stringContaining('Chito'), at: '2026-10-20T20:00:00.000Z' });
    expect(first.assistant.id).toBe('c1-m2');
    expect(res.body.dateRanges[0].text).toBe('yesterday');
    expect(res.body.timeZone).toBe('Europe/London');

    const byWords = await stack.client.searchConversations(user, { query: 'ramen broth', topK: 1 });
    expect(byWords.exchanges).toHaveLength(1);
    expect(byWords.exchanges[0]!.messageIds).toEqual(['c2-m1', 'c2-m2']);
    expect(byWords.exchanges[0]!.routes).toContain('exchange_bm25');
  });

  it('refuses bad input with a code and keeps users apart', async () => {
    const user = `${stack.ctx.prefix}-l0bad`;
    await converse(user, 'c1', '2026-10-20T21:00:00Z', [['user', 'The spare key is under the blue flowerpot.']]);
    const empty = await stack.ctx.call('POST', `/v1/users/${user}/conversations/search`, { query: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('validation_failed');
    const zone = await stack.ctx.call('POST', `/v1/users/${user}/conversations/search`, { query: 'key', timeZone: 'Mars/Olympus' });
    expect(zone.status).toBe(400);
    const badRecallZone = await stack.ctx.call('POST', `/v1/users/${user}/recall`, { query: 'key', timeZone: 'Mars/Olympus' });
    expect(badRecallZone.status).toBe(400);
    // Another tenant's user of the same id is another person: nothing of this one's.
    const foreign = await stack.ctx.call('POST', `/v1/users/${user}/conversations/search`, { query: 'spare key' }, { authorization: `Bearer ${OTHER_TENANT_KEY}` });
    expect(foreign.status).toBe(200);
    expect(JSON.stringify(foreign.body)).not.toContain('flowerpot');
    const other = await stack.client.searchConversations(`${stack.ctx.prefix}-l0other`, { query: 'spare key flowerpot' });
    expect(other.exchanges).toEqual([]);
  });
});

describe('forgotten messages stay forgotten', () => {
  it('neither conversation search, recall nor episodes bring back what the user asked to forget', async () => {
    const user = `${stack.ctx.prefix}-forget`;
    await converse(user, 'c1', '2026-01-10T10:00:00Z', [
      ['user', 'I have type 2 diabetes, keep that in mind for food suggestions.'],
      ['assistant', 'Noted.'],
      ['user', 'Also we visited the Louvre in Paris today.'],
    ]);
    const before = await stack.ctx.runtime.pool.query(`SELECT summary FROM episodes WHERE user_id = $1 AND conversation_id = 'c1'`, [stack.ctx.userKey(user)]);
    expect(before.rows[0].summary).toContain('diabetes');

    await converse(user, 'c2', '2026-01-20T10:00:00Z', [
      ['user', "Please forget my diabetes information, I don't want you to store health data."],
      ['assistant', "Done, I've forgotten it."],
    ]);
    const search = await stack.client.searchConversations(user, { query: 'diabetes health', now: '2026-01-21T10:00:00Z' });
    expect(JSON.stringify(search.exchanges)).not.toMatch(/diabetes/iu);
    const past = await stack.client.recall(user, { query: 'Did I tell you about my health on January 10?', now: '2026-01-21T10:00:00Z', timeZone: 'UTC' });
    expect(past.context.userPrefix).not.toMatch(/diabetes/iu);
    // The rest of that day is still there.
    expect(past.context.userPrefix).toContain('Louvre');
    const after = await stack.ctx.runtime.pool.query(`SELECT summary, message_ids FROM episodes WHERE user_id = $1 AND conversation_id = 'c1'`, [stack.ctx.userKey(user)]);
    expect(after.rows[0].summary).not.toContain('diabetes');
    expect(after.rows[0].message_ids).not.toContain('c1-m1');
  });
});
