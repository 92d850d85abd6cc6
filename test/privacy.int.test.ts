import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScheduleNotFoundError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { ChromaClient } from 'chromadb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { episodeCollectionName } from '../src/adapters/chroma/chroma-episode-index';
import { userCollectionName } from '../src/adapters/chroma/user-collections';
import { PURGE_TABLES } from '../src/adapters/postgres/purge-repository';
import { digestScheduleId, nudgeScheduleId } from '../src/proactive/proactive-schedules';
import { EXPORT_SECTIONS, openUserExport } from '../src/privacy/user-export';
import { exchangeVectorId, indexExchanges, lineVectorId } from '../src/conversation/exchange-index';
import { purgeUserRef } from '../src/security/purge-user-ref';
import { memorySweepWorkflow } from '../workflows/lifecycle/memory-sweep';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';
import { poll } from './support/poll';
import { mulberry32 } from './support/prng';

// Privacy on the real stack, where every store must agree: export, purge of a user, hard erasure
// of one memory, and retention in the daily sweep.

let ctx: TestContext;
let chroma: ChromaClient;
const destroyedKeys: string[] = [];
const DAY = 86_400_000;
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

beforeAll(async () => {
  ctx = await createTestContext();
  // The payload codec's crypto-shredding hook, as the purge sees it.
  // The real payload key store, watched: purge must reach it.
  const keys = ctx.runtime.deps.userKeyDestroyer!;
  ctx.runtime.deps.userKeyDestroyer = {
    destroyUserKey: async (userKey) => {
      destroyedKeys.push(userKey);
      await keys.destroyUserKey(userKey);
    },
  };
  const u = new URL(ctx.runtime.endpoints.chromaUrl);
  chroma = new ChromaClient({ host: u.hostname, port: Number(u.port) });
});
afterAll(async () => {
  await ctx?.close();
});

const pool = () => ctx.runtime.pool;

/** Tables with a user_id column, from the catalogue (not from the code under test). */
async function userTables(): Promise<string[]> {
  const { rows } = await pool().query<{ table_name: string }>(
    `SELECT DISTINCT table_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name = 'user_id' ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

async function rowsOf(user: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of await userTables()) {
    const { rows } = await pool().query(`SELECT count(*)::int AS n FROM ${table} WHERE user_id = $1`, [user]);
    if (rows[0].n > 0) out[table] = rows[0].n;
  }
  return out;
}

/** Rows anywhere (every table of the schema, every column) whose text contains `word`. */
async function rowsContaining(word: string): Promise<Record<string, number>> {
  const { rows: tables } = await pool().query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'pgmigrations'`,
  );
  const out: Record<string, number> = {};
  for (const { table_name: table } of tables) {
    const { rows } = await pool().query(`SELECT count(*)::int AS n FROM ${table} t WHERE t::text ILIKE $1`, [`%${word}%`]);
    if (rows[0].n > 0) out[table] = rows[0].n;
  }
  return out;
}

async function collectionExists(name: string): Promise<boolean> {
  try {
    await chroma.getCollection({ name, embeddingFunction: null as never });
    return true;
  } catch {
    return false;
  }
}

/**
 * Executions by visibility query, read raw: `workflow.list` decodes each memo, and a purged user's
 * StoreMemory memos are sealed with the data key the purge destroyed (DataKeyDestroyedError).
 */
async function rawExecutions(query: string): Promise<{ type: string; workflowId: string; runId: string }[]> {
  const found: { type: string; workflowId: string; runId: string }[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await ctx.runtime.temporal.workflowService.listWorkflowExecutions({ namespace: ctx.runtime.config.temporal.namespace, query, nextPageToken });
    for (const e of page.executions ?? []) found.push({ type: e.type?.name ?? '', workflowId: e.execution?.workflowId ?? '', runId: e.execution?.runId ?? '' });
    nextPageToken = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return found;
}

async function executionsOf(user: string): Promise<string[]> {
  return (await rawExecutions(`MemoryUserId = '${user}'`)).map((e) => `${e.type}:${e.workflowId}`);
}

async function schedulesOf(user: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const s of ctx.runtime.temporal.schedule.list({ query: `MemoryUserId = '${user}'` })) ids.push(s.scheduleId);
  return ids;
}

async function scheduleExists(id: string): Promise<boolean> {
  try {
    await ctx.runtime.temporal.schedule.getHandle(id).describe();
    return true;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return false;
    throw err;
  }
}

/**
 * A user with something in every store: settings (and so digest and nudge schedules), a
 * conversation extracted into memories, an episode and graph entities, a fired reminder and its
 * notification, a digest, and a running recall-reinforcement workflow.
 */
async function seedUser(user: string, marker: string): Promise<void> {
  expect((await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'Asia/Shanghai', digestTime: '21:30' })).status).toBe(200);
  const messages = [
    { id: 'm1', role: 'user', content: `我对${marker}过敏，吃了会起疹子。` },
    { id: 'm2', role: 'assistant', content: `好的，我记住了：你对${marker}过敏。` },
    { id: 'm3', role: 'user', content: '我最近在准备马拉松，目标是跑进4小时。' },
  ];
  expect((await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, { messages })).status).toBe(202);
  const end = await ctx.call('POST', `/v1/users/${user}/conversations/c1/end?wait=true`, {});
  expect(end.status).toBe(200);
  expect(end.body.result.counts.create).toBeGreaterThan(0);
  const created = await ctx.call('POST', `/v1/users/${user}/reminders`, { text: `提醒：买${marker}解药`, dueAt: inSeconds(2), timezone: 'Asia/Shanghai' });
  expect(created.status).toBe(201);
  await poll(() => ctx.call('GET', `/v1/users/${user}/notifications`), (r) => r.body.notifications?.length > 0);
  expect((await ctx.call('POST', `/v1/users/${user}/digests`)).status).toBe(201);
  const recall = await ctx.call('POST', `/v1/users/${user}/recall`, { query: `我对什么过敏？` });
  expect(recall.body.memories.length).toBeGreaterThan(0);
}

describe('export, purge', () => {
  const alice = () => `${ctx.prefix}-alice`;
  const bob = () => `${ctx.prefix}-bob`;
  // Where the stores keep them: the (tenant, user) key, not the tenant's own id.
  const aliceKey = () => ctx.userKey(alice());
  const bobKey = () => ctx.userKey(bob());

  beforeAll(async () => {
    await Promise.all([seedUser(alice(), 'zorblax'), seedUser(bob(), 'quibbleton')]);
  }, 120_000);

  it('exports every section of the user as a streamed JSON attachment, with the user’s words and nothing of anyone else', async () => {
    const res = await fetch(`${ctx.baseUrl}/v1/users/${alice()}/export`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="jarvis-memory-export-.*\.json"$/);
    // Spooled from the snapshot before it is sent: the length is known and exact.
    const length = Number(res.headers.get('content-length'));
    const text = await res.text();
    expect(Buffer.byteLength(text, 'utf8')).toBe(length);
    const doc = JSON.parse(text);
    for (const key of ['format', 'exportedAt', 'user', 'settings', ...EXPORT_SECTIONS]) expect(doc, key).toHaveProperty(key);
    expect(doc.user).toMatchObject({ userId: alice(), tenantId: 'tenant-a' });
    expect(doc.settings).toMatchObject({ timezone: 'Asia/Shanghai', digestTime: '21:30' });

    const has = (section: string, word = 'zorblax') => JSON.stringify(doc[section]).includes(word);
    for (const section of ['memories', 'messages', 'reminders', 'notifications', 'digests', 'entities', 'relations']) expect(has(section), section).toBe(true);
    // The episode's summary keeps the sentences with names, places and numbers.
    expect(has('episodes', '马拉松')).toBe(true);
    expect(doc.conversations).toEqual([expect.objectContaining({ conversationId: 'c1', endedAt: expect.any(String) })]);
    expect(doc.messages.map((m: { messageId: string }) => m.messageId)).toEqual(['m1', 'm2', 'm3']);
    const allergy = doc.memories.find((m: { text: string }) => m.text.includes('zorblax'));
    expect(allergy.history.map((e: { action: string }) => e.action)).toContain('create');
    // Internal references stay out.
    expect(text).not.toMatch(/"workflowId"|"idempotencyKey"|"runId"/);
    // Nothing of the other user.
    expect(text).not.toContain('quibbleton');
    expect(text).not.toContain(bob());
  });

  it('pages with keyset queries to the same document, and names the user by the tenant’s id, never the internal key', async () => {
    const read = async (pageSize: number, externalUserId: string) => {
      const exported = await openUserExport(ctx.runtime.deps, { userKey: aliceKey(), externalUserId, now: new Date('2026-01-01T00:00:00Z'), pageSize });
      let text = '';
      for await (const chunk of exported.chunks) text += chunk;
      return { text, fileName: exported.fileName };
    };
    const big = await read(500, alice());
    const small = await read(1, alice());
    expect(JSON.parse(small.text)).toEqual(JSON.parse(big.text));
    const external = await read(2, 'alice@example.com');
    expect(external.text).not.toContain(aliceKey());
    expect(external.fileName).not.toContain(aliceKey());
    expect(JSON.parse(external.text).user.userId).toBe('alice@example.com');
    // Abandoning a download releases its snapshot transaction and connection.
    const abandoned = await openUserExport(ctx.runtime.deps, { userKey: aliceKey(), externalUserId: alice(), now: new Date() });
    await abandoned.chunks.next();
    await abandoned.chunks.return(undefined);
    const open = await pool().query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`);
    expect(open.rows[0].n).toBe(0);
  });

  it('purges the user everywhere: no row in any table, no Chroma collection, no schedule or workflow execution; one audit row without the user', async () => {
    const before = await rowsOf(aliceKey());
    expect(Object.keys(before)).toEqual(expect.arrayContaining(['memories', 'messages', 'episodes', 'reminders', 'notifications', 'digests', 'memory_events', 'entities']));
    const memoryIds = (await pool().query('SELECT id FROM memories WHERE user_id = $1', [aliceKey()])).rows.map((r) => r.id);
    const prefix = ctx.runtime.config.chroma.collection;
    expect(await collectionExists(userCollectionName(prefix, aliceKey()))).toBe(true);
    expect(await collectionExists(userCollectionName(episodeCollectionName(prefix), aliceKey()))).toBe(true);
    expect(await scheduleExists(digestScheduleId(aliceKey()))).toBe(true);
    expect((await executionsOf(aliceKey())).length).toBeGreaterThan(3);

    const res = await ctx.call('DELETE', `/v1/users/${alice()}?wait=true`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { workflowId, runId, result } = res.body;
    expect(workflowId).toMatch(/^purge:tenant-a:[0-9a-f]{32}$/);
    expect(workflowId).not.toContain(alice());
    expect(result.counts).toMatchObject({ chroma: { memories: 1, episodes: 1 }, dataKeyDestroyed: true });
    expect(result.counts.postgres).toMatchObject({ memories: before.memories, messages: before.messages, users: 1 });
    expect(result.counts.schedulesDeleted).toBeGreaterThanOrEqual(2);
    // The reminder waiting for its acknowledgement and the recall reinforcement were running.
    expect(result.counts.workflowsTerminated).toBeGreaterThanOrEqual(2);
    expect(result.counts.workflowsDeleted).toBeGreaterThan(3);
    expect(destroyedKeys).toContain(aliceKey());

    // PostgreSQL: every table that has a user_id column is covered by the purge, and is empty for the user.
    const tables = await userTables();
    // The payload key store owns its table: destroying the key leaves a tombstone without user_id.
    const covered = [...PURGE_TABLES.map((t) => t.table), 'user_data_keys'];
    for (const table of tables) expect(covered, `table ${table} has a user_id column but no purge support`).toContain(table);
    expect(await rowsOf(aliceKey())).toEqual({});
    expect((await pool().query('SELECT count(*)::int AS n FROM memory_entities WHERE memory_id = ANY($1::uuid[])', [memoryIds])).rows[0].n).toBe(0);
    expect(await rowsContaining('zorblax')).toEqual({});

    // Chroma: neither collection, and no collection of any kind owned by the user.
    expect(await collectionExists(userCollectionName(prefix, aliceKey()))).toBe(false);
    expect(await collectionExists(userCollectionName(episodeCollectionName(prefix), aliceKey()))).toBe(false);
    const owned = (await chroma.listCollections({ limit: 10_000 })).filter((c) => c.metadata?.user_id === aliceKey());
    expect(owned.map((c) => c.name)).toEqual([]);

    // Temporal: schedules gone; executions gone once visibility catches up (it lags).
    expect(await scheduleExists(digestScheduleId(aliceKey()))).toBe(false);
    expect(await scheduleExists(nudgeScheduleId(aliceKey()))).toBe(false);
    expect(await poll(() => schedulesOf(aliceKey()), (s) => s.length === 0, 30_000)).toEqual([]);
    // Deleted executions leave the dev server's visibility store with a lag that grows with its load.
    expect(await poll(() => executionsOf(aliceKey()), (e) => e.length === 0, 90_000)).toEqual([]);

    // The audit: one row for this run, keyed by the user ref, counts only.
    const ref = purgeUserRef(ctx.runtime.deps.secrets, aliceKey());
    const audits = await ctx.runtime.deps.purgeAudit.list({ tenantId: 'tenant-a', userRef: ref });
    expect(audits.filter((a) => a.runId === runId)).toHaveLength(1);
    expect(audits[0]).toMatchObject({ workflowId, completedAt: expect.any(Date), counts: result.counts });
    const raw = await pool().query('SELECT p::text AS row FROM purge_audit p WHERE run_id = $1', [runId]);
    expect(raw.rows[0].row).not.toContain(alice());
    expect(raw.rows[0].row).not.toContain(aliceKey());
    expect(raw.rows[0].row).not.toContain('zorblax');

    // Recall finds nothing (the request registers the user again: a new, empty life).
    const recall = await ctx.call('POST', `/v1/users/${alice()}/recall`, { query: '我对什么过敏？' });
    expect(recall.status).toBe(200);
    expect(recall.body.memories).toEqual([]);
    expect(JSON.stringify(recall.body)).not.toContain('zorblax');
    const search = await ctx.call('POST', `/v1/users/${alice()}/conversations/search`, { query: 'zorblax 过敏' });
    expect(search.body.exchanges).toEqual([]);
  }, 240_000);

  it('leaves the other user intact', async () => {
    const rows = await rowsOf(bobKey());
    expect(Object.keys(rows)).toEqual(expect.arrayContaining(['memories', 'messages', 'episodes', 'reminders', 'notifications', 'digests', 'users']));
    const prefix = ctx.runtime.config.chroma.collection;
    expect(await collectionExists(userCollectionName(prefix, bobKey()))).toBe(true);
    expect(await collectionExists(userCollectionName(episodeCollectionName(prefix), bobKey()))).toBe(true);
    expect(await scheduleExists(digestScheduleId(bobKey()))).toBe(true);
    expect((await executionsOf(bobKey())).length).toBeGreaterThan(3);
    const recall = await ctx.call('POST', `/v1/users/${bob()}/recall`, { query: '我对什么过敏？' });
    expect(JSON.stringify(recall.body.memories)).toContain('quibbleton');
  });

  it('purging twice, or a user who never existed, succeeds; each run leaves its own audit row', async () => {
    const again = await ctx.call('DELETE', `/v1/users/${alice()}?wait=true`);
    expect(again.status).toBe(200);
    expect(again.body.result.counts).toMatchObject({ chroma: { memories: 0, episodes: 0 } });
    expect(await rowsOf(aliceKey())).toEqual({});
    const ghost = `${ctx.prefix}-ghost`;
    const res = await ctx.call('DELETE', `/v1/users/${ghost}?wait=true`);
    expect(res.status).toBe(200);
    expect(res.body.result.counts.workflowsDeleted).toBe(0);
    expect(await rowsOf(ghost)).toEqual({});
    const audits = await ctx.runtime.deps.purgeAudit.list({ tenantId: 'tenant-a', userRef: purgeUserRef(ctx.runtime.deps.secrets, aliceKey()) });
    expect(audits).toHaveLength(2);
    expect(audits.every((a) => a.completedAt !== null)).toBe(true);
    // Without wait: 202 with the workflow id to follow.
    const accepted = await ctx.call('DELETE', `/v1/users/${ghost}`);
    expect(accepted.status).toBe(202);
    expect(accepted.body.workflowId).toMatch(/^purge:tenant-a:/);
    await ctx.runtime.temporal.workflow.getHandle(accepted.body.workflowId, accepted.body.runId).result();
  });
});

describe('purge racing writes', () => {
  it('a purge sent amid a burst of writes answers no 5xx, and a purge after it leaves nothing in PostgreSQL or Chroma', async () => {
    // Two devices of one user: one erases everything while the other is still talking. Whatever
    // order they land in, every answer is a service answer (a run the purge stopped is 409), and
    // once the burst is over a purge still reaches every store: no late vector write, extraction
    // or outbox delivery brings data back after it.
    const random = mulberry32(4242);
    for (let round = 0; round < 3; round++) {
      const user = `${ctx.prefix}-storm${round}`;
      const key = ctx.userKey(user);
      await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'Allergic to peanuts', type: 'fact' });
      await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm0', role: 'user', content: 'I moved to Lisbon last spring' });
      const ops: [string, string, unknown?][] = [
        ['DELETE', `/v1/users/${user}?wait=true`],
        ['POST', `/v1/users/${user}/memories`, { text: 'Likes jazz', type: 'preference' }],
        ['POST', `/v1/users/${user}/conversations/c1/messages`, { id: 'm1', role: 'user', content: 'I adopted two cats' }],
        ['POST', `/v1/users/${user}/conversations/c1/end?wait=true`],
        ['POST', `/v1/users/${user}/reminders`, { text: 'gym', dueAt: inSeconds(3600), timezone: 'UTC' }],
        ['POST', `/v1/users/${user}/recall`, { query: 'allergy' }],
        ['PUT', `/v1/users/${user}/settings`, { timezone: 'Europe/Lisbon' }],
        ['GET', `/v1/users/${user}/export`],
      ];
      const answers = await Promise.all(
        ops.map(async ([method, path, body]) => {
          await new Promise((r) => setTimeout(r, Math.floor(random() * 60)));
          const res = await ctx.call(method, path, body);
          return { method, path, status: res.status, body: JSON.stringify(res.body).slice(0, 300) };
        }),
      );
      expect(answers.filter((a) => a.status >= 500)).toEqual([]);
      // Let what the burst started finish (extraction, vector outbox), then erase again.
      await new Promise((r) => setTimeout(r, 3000));
      expect((await ctx.call('DELETE', `/v1/users/${user}?wait=true`)).status).toBeLessThan(300);
      await new Promise((r) => setTimeout(r, 2000));
      expect(await rowsOf(key)).toEqual({});
      const owned = (await chroma.listCollections({ limit: 10_000 })).filter((c) => c.metadata?.user_id === key);
      expect(owned.map((c) => c.name)).toEqual([]);
    }
  });
});

describe('hard delete of one memory', () => {
  it('erases its row, history, vector, source messages and every copy of its words; soft delete stays the default', async () => {
    const carol = `${ctx.prefix}-carol`;
    const messages = [
      { id: 'm1', role: 'user', content: '我对frobnitz过敏，吃了会起疹子。' },
      { id: 'm2', role: 'user', content: '我最近在准备马拉松，目标是跑进4小时。' },
    ];
    expect((await ctx.call('POST', `/v1/users/${carol}/conversations/c1/messages`, { messages })).status).toBe(202);
    expect((await ctx.call('POST', `/v1/users/${carol}/conversations/c1/end?wait=true`, {})).status).toBe(200);
    expect((await ctx.call('POST', `/v1/users/${carol}/digests`)).status).toBe(201);
    const list = (await ctx.call('GET', `/v1/users/${carol}/memories`)).body.memories as { id: string; text: string }[];
    const target = list.find((m) => m.text.includes('frobnitz'))!;
    const other = list.find((m) => m.text.includes('马拉松'))!;
    expect(target && other).toBeTruthy();
    expect(Object.keys(await rowsContaining('frobnitz'))).toEqual(expect.arrayContaining(['memories', 'memory_terms', 'memory_events', 'messages', 'message_terms', 'entities', 'digests']));
    const vectors = await chroma.getCollection({ name: userCollectionName(ctx.runtime.config.chroma.collection, ctx.userKey(carol)), embeddingFunction: null as never });
    expect((await vectors.get({ ids: [target.id] })).ids).toEqual([target.id]);

    const res = await ctx.call('DELETE', `/v1/users/${carol}/memories/${target.id}?hard=true`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: target.id, erased: true, vectorRemoved: true, conversations: ['c1'], episodesRebuilt: true });
    expect(res.body.removed).toMatchObject({ messages: 1 });

    expect(await rowsContaining('frobnitz')).toEqual({});
    expect((await vectors.get({ ids: [target.id] })).ids).toEqual([]);
    expect((await ctx.call('GET', `/v1/users/${carol}/memories/${target.id}`)).status).toBe(404);
    expect((await ctx.call('DELETE', `/v1/users/${carol}/memories/${target.id}?hard=true`)).status).toBe(404);
    // What stays: a text-free record that an erasure happened, and everything else of the user.
    const { rows: events } = await pool().query('SELECT action, before, actor FROM memory_events WHERE user_id = $1 AND memory_id = $2', [ctx.userKey(carol), target.id]);
    expect(events).toEqual([{ action: 'erase', before: null, actor: 'api' }]);
    expect((await pool().query('SELECT message_id FROM messages WHERE user_id = $1 ORDER BY message_id', [ctx.userKey(carol)])).rows).toEqual([{ message_id: 'm2' }]);
    expect((await ctx.call('GET', `/v1/users/${carol}/memories/${other.id}`)).body.memory.status).toBe('active');
    const episode = await pool().query('SELECT summary, message_ids FROM episodes WHERE user_id = $1', [ctx.userKey(carol)]);
    expect(episode.rows).toHaveLength(1);
    expect(episode.rows[0].message_ids).toEqual(['m2']);
    // BM25 statistics follow the deleted postings.
    const stats = await pool().query(
      `SELECT s.doc_count::int AS docs, s.total_length::int AS len, (SELECT count(*)::int FROM messages WHERE user_id = $1 AND doc_length > 0) AS n,
              (SELECT sum(doc_length)::int FROM messages WHERE user_id = $1) AS l FROM message_index_stats s WHERE s.user_id = $1`,
      [ctx.userKey(carol)],
    );
    expect(stats.rows[0].docs).toBe(stats.rows[0].n);
    expect(stats.rows[0].len).toBe(stats.rows[0].l);

    const soft = await ctx.call('DELETE', `/v1/users/${carol}/memories/${other.id}`);
    expect(soft.status).toBe(200);
    expect(soft.body).toMatchObject({ memory: { id: other.id, status: 'expired' }, changed: true });
    expect((await ctx.call('GET', `/v1/users/${carol}/memories/${other.id}`)).status).toBe(200);
  });
});

describe('retention in the daily sweep', () => {
  it('deletes messages, episodes, notifications and digests older than their age, keeps indexes consistent, and is idempotent', async () => {
    const dave = `${ctx.prefix}-dave`;
    const now = new Date();
    const old = new Date(now.getTime() - 400 * DAY);
    const recent = new Date(now.getTime() - 5 * DAY);
    const say = async (conversationId: string, at: Date, contents: string[]) => {
      const messages = contents.map((content, i) => ({ id: `${conversationId}-m${i}`, role: i % 2 ? 'assistant' : 'user', content, at: new Date(at.getTime() + i * 1000).toISOString() }));
      expect((await ctx.call('POST', `/v1/users/${dave}/conversations/${conversationId}/messages`, { messages })).status).toBe(202);
      expect((await ctx.call('POST', `/v1/users/${dave}/conversations/${conversationId}/end?wait=true`, {})).status).toBe(200);
    };
    await say('old', old, ['我住在上海，在xyzzy公司上班。', '好的，记住了你在xyzzy公司上班。']);
    await say('new', recent, ['我最近在学吉他，每天练一小时。', '坚持练习吉他很好。']);
    const daveKey = ctx.userKey(dave);
    const q = (sql: string, params: unknown[] = [daveKey]) => pool().query(sql, params);
    await q(
      `INSERT INTO notifications (id, user_id, kind, title, body, idempotency_key, created_at)
       VALUES (gen_random_uuid(), $1, 'nudge', 'old', 'old nudge', 'old-n', $2), (gen_random_uuid(), $1, 'nudge', 'new', 'new nudge', 'new-n', $3)`,
      [daveKey, new Date(now.getTime() - 100 * DAY), recent],
    );
    await q(
      `INSERT INTO digests (user_id, digest_date, time_zone, text, sections, generated_by)
       VALUES ($1, ($2::timestamptz)::date, 'UTC', 'old digest', '{}', 'template'), ($1, ($3::timestamptz)::date, 'UTC', 'new digest', '{}', 'template')`,
      [daveKey, new Date(now.getTime() - 100 * DAY), recent],
    );
    const oldEpisode = (await q(`SELECT id FROM episodes WHERE user_id = $1 AND conversation_id = 'old'`)).rows[0].id as string;
    const newEpisode = (await q(`SELECT id FROM episodes WHERE user_id = $1 AND conversation_id = 'new'`)).rows[0].id as string;
    const episodeVectors = await chroma.getCollection({ name: userCollectionName(episodeCollectionName(ctx.runtime.config.chroma.collection), daveKey), embeddingFunction: null as never });
    expect((await episodeVectors.get({ ids: [oldEpisode, newEpisode] })).ids.sort()).toEqual([oldEpisode, newEpisode].sort());
    const memoriesBefore = (await q('SELECT count(*)::int AS n FROM memories WHERE user_id = $1')).rows[0].n;
    // The exchange index holds both conversations (each line's vector and each pair's).
    expect((await indexExchanges(ctx.runtime.deps, { limit: 1000, budgetMs: 60_000 })).failed).toBe(0);
    const exchangeVectorIds = (conversationId: string) =>
      [0, 1].flatMap((i) => [lineVectorId(daveKey, conversationId, `${conversationId}-m${i}`), exchangeVectorId(daveKey, conversationId, `${conversationId}-m${i}`)]);
    const storedExchangeVectors = async (ids: string[]): Promise<string[]> => {
      const owned = (await chroma.listCollections({ limit: 10_000 })).filter((c) => c.metadata?.user_id === daveKey && /ex/u.test(c.name));
      const found = await Promise.all(owned.map(async (c) => (await chroma.getCollection({ name: c.name, embeddingFunction: null as never })).get({ ids })));
      return found.flatMap((f) => f.ids);
    };
    expect((await storedExchangeVectors(exchangeVectorIds('old'))).length).toBeGreaterThan(0);
    const newExchangeVectors = (await storedExchangeVectors(exchangeVectorIds('new'))).sort();
    expect(newExchangeVectors.length).toBeGreaterThan(0);

    const sweep = (name: string) =>
      ctx.runtime.temporal.workflow.execute(memorySweepWorkflow, {
        taskQueue: ctx.taskQueue,
        workflowId: `retention-test:${ctx.prefix}:${name}`,
        args: [{ now: now.toISOString(), batchSize: 100, maxStepsPerRun: 3, stepBudgetMs: 1 }],
      });
    const first = await sweep('r1');
    expect(first.retentionPending).toBe(false);
    expect(first.retention).toMatchObject({ messages: 2, episodes: 1, episodeVectorsRemoved: 1, notifications: 1, digests: 1, conversations: 1 });
    expect(first.retention!.messagePostings).toBeGreaterThan(0);

    expect((await q('SELECT conversation_id FROM conversations WHERE user_id = $1')).rows).toEqual([{ conversation_id: 'new' }]);
    expect((await q('SELECT DISTINCT conversation_id FROM messages WHERE user_id = $1')).rows).toEqual([{ conversation_id: 'new' }]);
    expect((await q('SELECT DISTINCT conversation_id FROM message_terms WHERE user_id = $1')).rows).toEqual([{ conversation_id: 'new' }]);
    expect((await q('SELECT id FROM episodes WHERE user_id = $1')).rows).toEqual([{ id: newEpisode }]);
    expect((await q('SELECT DISTINCT episode_id FROM episode_terms WHERE user_id = $1')).rows).toEqual([{ episode_id: newEpisode }]);
    expect((await q('SELECT title FROM notifications WHERE user_id = $1')).rows).toEqual([{ title: 'new' }]);
    expect((await q('SELECT text FROM digests WHERE user_id = $1')).rows).toEqual([{ text: 'new digest' }]);
    expect((await episodeVectors.get({ ids: [oldEpisode, newEpisode] })).ids).toEqual([newEpisode]);
    // The deleted messages' embeddings went with them; the kept ones' stay.
    expect(await storedExchangeVectors(exchangeVectorIds('old'))).toEqual([]);
    expect((await storedExchangeVectors(exchangeVectorIds('new'))).sort()).toEqual(newExchangeVectors);
    expect(first.retention!.exchangeVectorsRemoved).toBeGreaterThan(0);
    // BM25 statistics equal what is left.
    const messageStats = await q(
      `SELECT s.doc_count::int AS docs, s.total_length::int AS len,
              (SELECT count(*)::int FROM messages WHERE user_id = $1 AND doc_length > 0) AS n, (SELECT sum(doc_length)::int FROM messages WHERE user_id = $1) AS l
         FROM message_index_stats s WHERE s.user_id = $1`,
    );
    expect(messageStats.rows[0]).toMatchObject({ docs: messageStats.rows[0].n, len: messageStats.rows[0].l });
    const episodeStats = await q(
      `SELECT s.doc_count::int AS docs, s.total_length::int AS len,
              (SELECT count(*)::int FROM episodes WHERE user_id = $1) AS n, (SELECT sum(doc_length)::int FROM episodes WHERE user_id = $1) AS l
         FROM episode_index_stats s WHERE s.user_id = $1`,
    );
    expect(episodeStats.rows[0]).toMatchObject({ docs: episodeStats.rows[0].n, len: episodeStats.rows[0].l });
    // Memories are the lifecycle's business, not retention's.
    expect((await q('SELECT count(*)::int AS n FROM memories WHERE user_id = $1')).rows[0].n).toBe(memoriesBefore);

    const second = await sweep('r2');
    expect(second.retention).toMatchObject({ messages: 0, messagePostings: 0, episodes: 0, notifications: 0, digests: 0, conversations: 0 });
  });
});

describe('workflow code', () => {
  it('replays the purges and the sweeps with retention, and a sweep recorded before retention existed (patched)', async () => {
    type History = temporal.api.history.v1.IHistory;
    const histories: { workflowId: string; history: History }[] = [];
    for (const e of await rawExecutions(`TaskQueue = "${ctx.taskQueue}"`)) {
      if (e.type !== 'PurgeUser' && e.type !== 'memorySweepWorkflow') continue;
      histories.push({ workflowId: `${e.workflowId}/${e.runId}`, history: await ctx.runtime.temporal.workflow.getHandle(e.workflowId, e.runId).fetchHistory() });
    }
    expect(histories.filter((h) => h.workflowId.startsWith('purge:')).length).toBeGreaterThanOrEqual(3);
    expect(histories.filter((h) => h.workflowId.startsWith('retention-test:')).length).toBeGreaterThanOrEqual(2);
    const recorded = readFileSync(join(import.meta.dirname, 'fixtures', 'histories', 'memorySweepWorkflow.binpb'));
    histories.push({ workflowId: 'recorded-sweep-before-retention', history: temporal.api.history.v1.History.decode(recorded) });
    const outcomes: { workflowId: string; error?: string }[] = [];
    for await (const r of Worker.runReplayHistories({ workflowBundle: { code: inject('workflowBundle') }, replayName: 'privacy-replay', dataConverter: ctx.runtime.dataConverter }, histories)) {
      outcomes.push({ workflowId: r.workflowId, ...(r.error ? { error: String(r.error) } : {}) });
    }
    expect(outcomes).toHaveLength(histories.length);
    expect(outcomes.filter((o) => o.error)).toEqual([]);
  });
});
