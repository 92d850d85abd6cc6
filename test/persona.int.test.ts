import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERSONA_HEADERS } from '../src/core/persona/profile';
import { SCENE_HEADERS } from '../src/core/persona/scenes';
import { countTokens } from '../src/core/text/token-budget';
import { memoriesChangedSignal, personaWorkflowId, RebuildPersona } from '../workflows/persona/persona';
import { userSearchAttributes } from '../workflows/shared/search-attributes';
import { MemoryUserIdKey } from '../workflows/shared/search-attributes';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';

let ctx: TestContext;
beforeAll(async () => {
  // A short debounce keeps the test quick; the coalescing is the same.
  ctx = await createTestContext({ PERSONA_DEBOUNCE_SECONDS: '1' });
});
afterAll(async () => {
  await ctx?.close();
});

const personas = () => ctx.runtime.deps.personas!;

async function remember(user: string, text: string, type: string): Promise<string> {
  const res = await ctx.call('POST', `/v1/users/${user}/memories`, { text, type });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.memory.id as string;
}

async function recallOf(user: string, query: string, body: Record<string, unknown> = {}) {
  const res = await ctx.call('POST', `/v1/users/${user}/recall`, { query, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { context: { system: string; userPrefix: string }; memories: { id: string; text: string }[]; tokens: number; persona?: { memoryIds: string[]; builder: string }; routes: { route: string; ok: boolean }[]; error?: unknown };
}

describe('persona (L3) on the real stack', () => {
  it('is built by RebuildPersona after API writes, injected first in the stable system part, changed by a supersede, exported and purged', async () => {
    const user = `${ctx.prefix}-alice`;
    const key = ctx.userKey(user);
    const city = await remember(user, '我住在上海', 'fact');
    const allergy = await remember(user, '我对花生过敏，吃了会起疹子', 'fact');
    const coffee = await remember(user, '我喜欢喝美式咖啡', 'preference');
    const goal = await remember(user, '今年想跑完一次全马', 'goal');

    // The workflow, by its id, with the user's search attributes; one run coalesces the burst.
    const handle = ctx.runtime.temporal.workflow.getHandle(personaWorkflowId(key));
    const built = await poll(() => personas().get({ userId: key }), (p) => p?.memoryIds.length === 4, 30_000);
    expect(built?.memoryIds.sort()).toEqual([city, allergy, coffee, goal].sort());
    const description = await handle.describe();
    expect(description.type).toBe('RebuildPersona');
    expect(description.typedSearchAttributes.get(MemoryUserIdKey)).toBe(key);
    expect(built!.builder).toBe('template');
    expect(built!.language).toBe('zh');
    expect(built!.lines[0]!.text).toBe('- 健康与饮食：我对花生过敏，吃了会起疹子');

    // The same run regroups the scenes after the persona: wait for that too, or the block below it may still change.
    await poll(() => ctx.runtime.deps.scenes!.get({ userId: key }), (sc) => sc?.scenes.reduce((n, x) => n + x.memoryIds.length, 0) === 4, 30_000);
    // Recall: the profile heads the system part, within its share; what it states is not repeated below.
    const r = await recallOf(user, '中午吃什么好？');
    expect(r.error).toBeUndefined();
    expect(r.context.system.startsWith(`${PERSONA_HEADERS.zh}\n- 健康与饮食：我对花生过敏，吃了会起疹子`)).toBe(true);
    expect(r.context.system).toContain('我住在上海');
    // The persona's own lines (the scene navigation block follows it, within its own share).
    expect(countTokens(r.context.system.split(`\n${SCENE_HEADERS.zh}`)[0]!)).toBeLessThanOrEqual(Math.floor(800 * 0.15));
    expect(r.persona?.memoryIds.sort()).toEqual([city, allergy, coffee, goal].sort());
    // Found by the routes, the allergy is listed (it is in the context, in the profile) but not repeated in the memories block.
    expect(r.memories.map((m) => m.id)).toContain(allergy);
    expect(r.context.userPrefix).not.toContain('花生');
    expect(r.routes.find((x) => x.route === 'persona')).toMatchObject({ ok: true });
    // The stable part is the same for another message: the prompt cache keeps it.
    expect((await recallOf(user, 'Any plans for the weekend?')).context.system).toBe(r.context.system);

    // A move, said in conversation: extraction supersedes the old city and the profile follows.
    const said = await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, { messages: [{ id: 'c1-m1', role: 'user', content: '我搬去杭州了。', at: '2026-07-01T09:00:00+08:00' }] });
    expect(said.status, JSON.stringify(said.body)).toBe(202);
    const ended = await ctx.call('POST', `/v1/users/${user}/conversations/c1/end?wait=true`, {});
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    const supersede = (ended.body.result.decisions as { action: string; affectedIds: string[] }[]).find((d) => d.action === 'supersede' || d.action === 'update');
    expect(supersede, JSON.stringify(ended.body.result.decisions)).toBeDefined();
    expect(supersede!.affectedIds).toContain(city);
    // Until the rebuild, the line about the old city is already left out; then the new one is in.
    expect((await recallOf(user, '周末去哪玩？')).context.system).not.toContain('上海');
    const moved = await poll(() => personas().get({ userId: key }), (p) => p?.text.includes('杭州') === true, 30_000);
    expect(moved?.text).toContain('杭州');
    expect(moved?.text).not.toContain('上海');
    const after = await recallOf(user, '周末去哪玩？');
    expect(after.context.system).toContain('杭州');
    expect(after.context.system).not.toContain('上海');

    // Forgetting through the API rebuilds it too.
    expect((await ctx.call('DELETE', `/v1/users/${user}/memories/${coffee}`)).status).toBe(200);
    const forgotten = await poll(() => personas().get({ userId: key }), (p) => p?.memoryIds.includes(coffee) === false, 30_000);
    expect(forgotten?.text).not.toContain('美式咖啡');

    // Export: the profile is part of what is stored about the user.
    const exported = await fetch(`${ctx.baseUrl}/v1/users/${user}/export`, { headers: { authorization: 'Bearer test-key-tenant-a' } });
    expect(exported.status).toBe(200);
    const doc = (await exported.json()) as { profile: { text: string; memoryIds: string[]; builder: string } | null };
    expect(doc.profile?.text).toContain('杭州');
    expect(doc.profile?.builder).toBe('template');

    // Purge: the row goes with the user.
    const purged = await ctx.call('DELETE', `/v1/users/${user}?wait=true`);
    expect(purged.status, JSON.stringify(purged.body)).toBe(200);
    expect(await personas().get({ userId: key })).toBeUndefined();
    const { rows } = await ctx.runtime.pool.query('SELECT count(*)::int AS n FROM user_profiles WHERE user_id = $1', [key]);
    expect(rows[0].n).toBe(0);
  });

  it('rebuilding is idempotent: the same memories write nothing, and a user with nothing durable has no profile', async () => {
    const user = `${ctx.prefix}-bob`;
    const key = ctx.userKey(user);
    await remember(user, 'I work as a nurse in Toronto', 'fact');
    const first = await poll(() => personas().get({ userId: key }), (p) => p !== undefined, 30_000);
    expect(first?.language).toBe('en');
    expect(first?.text).toBe('- About: I work as a nurse in Toronto');
    const { rebuildPersona } = await import('../src/persona/persona');
    const deps = { ...ctx.runtime.deps, personas: personas() };
    expect(await rebuildPersona(deps, { userId: key })).toMatchObject({ action: 'unchanged' });
    expect((await personas().get({ userId: key }))?.builtAt).toEqual(first?.builtAt);

    const nobody = ctx.userKey(`${ctx.prefix}-nobody`);
    expect(await rebuildPersona(deps, { userId: nobody })).toMatchObject({ action: 'empty' });
    // A recall restricted to some routes (memory search) reads no persona.
    const searched = await recallOf(user, 'nurse', { routes: ['ann', 'bm25'] });
    expect(searched.context.system).toBe('');
    expect(searched.memories.map((m) => m.text)).toContain('I work as a nurse in Toronto');
  });

  it('coalesces a burst of changes into one rebuild, and a later change starts a new run under the same id', async () => {
    const key = ctx.userKey(`${ctx.prefix}-burst`);
    const start = () =>
      ctx.runtime.temporal.workflow.signalWithStart(RebuildPersona, {
        taskQueue: ctx.taskQueue,
        workflowId: personaWorkflowId(key),
        args: [{ userKey: key, debounceSeconds: 2 }],
        signal: memoriesChangedSignal,
        signalArgs: [],
        typedSearchAttributes: userSearchAttributes(key),
      });
    for (let i = 0; i < 5; i++) await start();
    const first = await ctx.runtime.temporal.workflow.getHandle(personaWorkflowId(key)).result();
    expect(first).toMatchObject({ rebuilds: 1, signals: 5, last: { action: 'empty' } });
    const again = await start();
    expect(await again.result()).toMatchObject({ rebuilds: 1, signals: 1 });
  });
});
