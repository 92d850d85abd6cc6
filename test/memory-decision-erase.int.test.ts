import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';

// The MemoryDecision's erase reaches privacy code through the MemoryEraser port the worker builds
// (src/runtime.ts). It must run over the worker's activity deps, whose unit of work signals the
// persona rebuild on every committed memory change: built over the plain deps, the erased memory
// would stay in the user's persona until some other write.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ PERSONA_DEBOUNCE_SECONDS: '1' });
});
afterAll(async () => {
  await ctx?.close();
});

async function remember(user: string, text: string, type: string): Promise<string> {
  const res = await ctx.call('POST', `/v1/users/${user}/memories`, { text, type });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.memory.id as string;
}

describe('hard erase through the MemoryDecision workflow', () => {
  it('erases the memory and the persona is rebuilt without it', async () => {
    const user = `${ctx.prefix}-erase`;
    const key = ctx.userKey(user);
    const personas = ctx.runtime.deps.personas!;
    const city = await remember(user, '我住在上海', 'fact');
    const allergy = await remember(user, '我对花生过敏，吃了会起疹子', 'fact');
    const built = await poll(() => personas.get({ userId: key }), (p) => p?.memoryIds.length === 2, 60_000);
    expect(built?.memoryIds.sort()).toEqual([city, allergy].sort());

    const res = await ctx.call('DELETE', `/v1/users/${user}/memories/${allergy}?hard=true`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await ctx.call('GET', `/v1/users/${user}/memories/${allergy}`)).status).toBe(404);

    const rebuilt = await poll(() => personas.get({ userId: key }), (p) => p?.memoryIds.length === 1, 60_000);
    expect(rebuilt?.memoryIds).toEqual([city]);
  }, 180_000);
});
