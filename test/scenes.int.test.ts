import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryMcpEndpoint } from '../src/client/index';
import { PERSONA_HEADERS } from '../src/core/persona/profile';
import { classifyScene, prototypeTexts, SCENE_HEADERS, scenePrototypes } from '../src/core/persona/scenes';
import { countTokens } from '../src/core/text/token-budget';
import { rebuildScenes } from '../src/persona/scenes';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';
import { poll } from './support/poll';

/** Scene navigation (L2, seed 004) on the real stack: e5 grouping, the rebuild, the block in recall, the drill-down. */
let ctx: TestContext;
const clients: Client[] = [];
beforeAll(async () => {
  ctx = await createTestContext({ PERSONA_DEBOUNCE_SECONDS: '1' });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await ctx?.close();
});

const scenes = () => ctx.runtime.deps.scenes!;

async function remember(user: string, text: string, type = 'fact'): Promise<string> {
  const res = await ctx.call('POST', `/v1/users/${user}/memories`, { text, type });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.memory.id as string;
}

async function recallOf(user: string, query: string) {
  const res = await ctx.call('POST', `/v1/users/${user}/recall`, { query });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { context: { system: string; userPrefix: string }; tokens: number; routes: { route: string; ok: boolean; hits: number }[]; error?: unknown };
}

describe('scene grouping with the e5 embedder', () => {
  it('classifies the held-out half of the labelled set at least 80% right (tuned on the other half only)', async () => {
    const rows = readFileSync(new URL('./fixtures/scenes/labelled.jsonl', import.meta.url), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { text: string; scene: string; split: string });
    const held = rows.filter((r) => r.split === 'heldout');
    const embedder = ctx.runtime.deps.embedder;
    const prototypes = scenePrototypes(await embedder.embedDocuments({ texts: prototypeTexts() }));
    const vectors = await embedder.embedDocuments({ texts: held.map((r) => r.text) });
    const misses = held.filter((r, i) => classifyScene({ text: r.text, vector: vectors[i], prototypes }) !== r.scene);
    const accuracy = (held.length - misses.length) / held.length;
    console.log(`scene held-out accuracy: ${held.length - misses.length}/${held.length} (${(accuracy * 100).toFixed(1)}%)`);
    expect(accuracy, misses.map((m) => `${m.scene}: ${m.text}`).join('\n')).toBeGreaterThanOrEqual(0.8);
  });
});

describe('scene navigation (L2) on the real stack', () => {
  it('is rebuilt with the persona, injected after it in the stable part within its share, and drilled into by API and MCP', async () => {
    const user = `${ctx.prefix}-mei`;
    const key = ctx.userKey(user);
    const allergy = await remember(user, '我对青霉素过敏');
    const dentist = await remember(user, '医生说我下个月要拔智齿', 'event');
    await remember(user, '我在一家物流公司做后端工程师');
    const daughter = await remember(user, '我女儿今年上小学二年级');
    await remember(user, '我喜欢周末去郊外骑行', 'preference');
    const brief = await remember(user, '回答请尽量简短', 'instruction');
    // A directly written instruction waits for the user's confirmation before it is injected.
    expect((await ctx.call('POST', `/v1/users/${user}/memories/${brief}/confirm`, {})).status).toBe(200);

    // The persona's debounced workflow regroups the scenes in the same run.
    const built = await poll(() => scenes().get({ userId: key }), (s) => s?.scenes.reduce((n, x) => n + x.memoryIds.length, 0) === 5, 60_000);
    expect(built?.language).toBe('zh');
    const health = built!.scenes.find((s) => s.id === 'health');
    expect(health?.memoryIds.sort()).toEqual([allergy, dentist].sort());
    expect(built!.scenes[0]!.id).toBe('health');
    expect(built!.scenes.find((s) => s.id === 'family')?.memoryIds).toEqual([daughter]);
    // The instruction belongs to no scene.
    expect(built!.scenes.flatMap((s) => s.memoryIds)).toHaveLength(5);

    // The generic question is answered by the persona and the scenes, in the stable system part.
    await poll(() => ctx.runtime.deps.personas!.get({ userId: key }), (p) => p !== undefined, 30_000);
    const r = await recallOf(user, '你都知道我哪些事？');
    expect(r.error).toBeUndefined();
    expect(r.routes.find((x) => x.route === 'scenes')).toMatchObject({ ok: true, hits: built!.lines.length });
    expect(r.context.system.startsWith(PERSONA_HEADERS.zh)).toBe(true);
    const blockAt = r.context.system.indexOf(SCENE_HEADERS.zh);
    expect(blockAt).toBeGreaterThan(0);
    expect(r.context.system).toContain('- health 健康(2)');
    expect(r.context.system).toContain('- family 家人(1)');
    // Before the standing instructions, within its share of the budget.
    expect(r.context.system.indexOf('回答请尽量简短')).toBeGreaterThan(blockAt);
    const block = r.context.system.slice(blockAt).split('\n').filter((l) => l === SCENE_HEADERS.zh || /^- [a-z]+ /u.test(l)).join('\n');
    expect(countTokens(block)).toBeLessThanOrEqual(Math.floor(800 * 0.1));
    // Cache-friendly: the same bytes for another message.
    expect((await recallOf(user, 'What should I cook tonight?')).context.system).toBe(r.context.system);

    // Drill-down over HTTP: the list, one scene, an unknown one.
    const listed = await ctx.call('GET', `/v1/users/${user}/scenes`);
    expect(listed.status).toBe(200);
    expect(listed.body.scenes[0]).toMatchObject({ id: 'health', label: '健康', memoryCount: 2 });
    const one = await ctx.call('GET', `/v1/users/${user}/scenes/health/memories`);
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(one.body.memories.map((m: { id: string }) => m.id).sort()).toEqual([allergy, dentist].sort());
    expect(one.body.total).toBe(2);
    const unknown = await ctx.call('GET', `/v1/users/${user}/scenes/astrology/memories`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const empty = await ctx.call('GET', `/v1/users/${user}/scenes/finance/memories`);
    expect(empty.status).toBe(404);
    const badLimit = await ctx.call('GET', `/v1/users/${user}/scenes/health/memories?limit=5000`);
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.error.code).toBe('validation_failed');

    // A user key reaches its own user's scenes, not another user's.
    const own = await ctx.call('POST', `/v1/users/${user}/keys`, { label: 'phone' });
    expect(own.status).toBe(201);
    const asUser = { authorization: `Bearer ${own.body.secret}` };
    expect((await ctx.call('GET', `/v1/users/${user}/scenes/health/memories`, undefined, asUser)).status).toBe(200);
    const other = await ctx.call('GET', `/v1/users/${ctx.prefix}-someone/scenes/health/memories`, undefined, asUser);
    expect(other.status).toBe(403);

    // The MCP tool.
    const { url, headers } = memoryMcpEndpoint({ baseUrl: ctx.baseUrl, apiKey: TEST_KEY, userId: user });
    const client = new Client({ name: 'scenes-int-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    clients.push(client);
    const tool = (await client.callTool({ name: 'memory_scene', arguments: { sceneId: 'health' } })) as { isError?: boolean; content: { text?: string }[]; structuredContent?: any };
    expect(tool.isError).toBeFalsy();
    expect(tool.structuredContent.memories.map((m: { id: string }) => m.id).sort()).toEqual([allergy, dentist].sort());
    expect(tool.content[0]!.text).toContain('青霉素');
    const areas = (await client.callTool({ name: 'memory_scene', arguments: {} })) as { structuredContent?: any };
    expect(areas.structuredContent.scenes.map((s: { id: string }) => s.id)).toContain('family');
    const wrong = (await client.callTool({ name: 'memory_scene', arguments: { sceneId: 'astrology' } })) as { isError?: boolean; content: { text?: string }[] };
    expect(wrong.isError).toBe(true);
    expect(wrong.content[0]!.text).toMatch(/^not_found/u);

    // Forgetting a memory regroups: the scene shrinks, and the drill-down never shows it meanwhile.
    expect((await ctx.call('DELETE', `/v1/users/${user}/memories/${dentist}`)).status).toBe(200);
    const gone = await ctx.call('GET', `/v1/users/${user}/scenes/health/memories`);
    expect(gone.body.memories.map((m: { id: string }) => m.id)).toEqual([allergy]);
    await poll(() => scenes().get({ userId: key }), (s) => s?.scenes.find((x) => x.id === 'health')?.memoryIds.length === 1, 60_000);
    expect((await recallOf(user, '最近怎么样')).context.system).toContain('- health 健康(1)');

    // Rebuilding again with the same memories writes nothing.
    expect(await rebuildScenes({ ...ctx.runtime.deps, scenes: scenes() }, { userId: key })).toMatchObject({ action: 'unchanged' });

    // Export holds the index; purge removes it.
    const exported = await fetch(`${ctx.baseUrl}/v1/users/${user}/export`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(exported.status).toBe(200);
    const doc = (await exported.json()) as { scenes: { scenes: { id: string }[] } | null };
    expect(doc.scenes?.scenes.map((s) => s.id)).toContain('health');
    const purged = await ctx.call('DELETE', `/v1/users/${user}?wait=true`);
    expect(purged.status, JSON.stringify(purged.body)).toBe(200);
    const { rows } = await ctx.runtime.pool.query('SELECT count(*)::int AS n FROM user_scenes WHERE user_id = $1', [key]);
    expect(rows[0].n).toBe(0);
  });

  it('an English user gets English labels, and a user with no memories no block', async () => {
    const user = `${ctx.prefix}-sam`;
    const key = ctx.userKey(user);
    await remember(user, 'My manager moved our launch to Friday');
    await remember(user, 'I have type 2 diabetes');
    const built = await poll(() => scenes().get({ userId: key }), (s) => s?.scenes.length === 2, 60_000);
    expect(built?.language).toBe('en');
    const r = await recallOf(user, 'what do you know about me?');
    expect(r.context.system).toContain(SCENE_HEADERS.en);
    expect(r.context.system).toMatch(/- (work Work|health Health)\(1\)/u);
    const nobody = await ctx.call('GET', `/v1/users/${ctx.prefix}-nobody/scenes`);
    expect(nobody.status).toBe(200);
    expect(nobody.body.scenes).toEqual([]);
    expect(await rebuildScenes({ ...ctx.runtime.deps, scenes: scenes() }, { userId: ctx.userKey(`${ctx.prefix}-nobody`) })).toMatchObject({ action: 'empty' });
  });
});
