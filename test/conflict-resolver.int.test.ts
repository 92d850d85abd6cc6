import { FakeListChatModel } from '@langchain/core/utils/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmConflictJudge } from '../src/adapters/llm/conflict-judge';
import type { ConflictJudge } from '../src/core/ports/memory';
import { applyCandidate } from '../src/memory/memory-writer';
import { candidate } from './support/candidate';
import { createTestContext, type TestContext } from './support/harness';
import { seedMemories } from './support/seed';

// The LLM conflict resolver on the write path, against the real PostgreSQL and Chroma. No chat
// model runs offline, so the model is LangChain's scripted FakeListChatModel; the neighbours, the
// lock, the checks under it, the applied decision and its audit are the real ones.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const said = new Date('2026-06-02T09:00:00Z');

/** A judge over a scripted model; `during` runs while the "model" thinks (to change the world meanwhile). */
function scripted(reply: string, during?: () => Promise<void>): ConflictJudge & { calls: number } {
  const inner = new LlmConflictJudge(new FakeListChatModel({ responses: [reply] }), 'scripted');
  const judge = {
    name: inner.name,
    calls: 0,
    async propose(input: { system: string; prompt: string }) {
      judge.calls++;
      await during?.();
      return inner.propose(input);
    },
  };
  return judge;
}

const status = async (user: string, id: string) => (await ctx.runtime.deps.memories.get({ userId: user, id }))?.status;

describe('LLM conflict resolver', () => {
  it('supersedes what the rules would have kept beside the new fact, asked outside the user’s lock, and audits it', async () => {
    const name = `${ctx.prefix}-job`;
    const user = ctx.userKey(name);
    const [initech] = await seedMemories(ctx.runtime.deps, user, [{ text: 'I work at Initech as a backend engineer' }]);
    const rulesOnly = await applyCandidate(ctx.runtime.deps, { userId: user, candidate: candidate('Globex hired me last month'), key: 'rules-only', audit: { actor: 'test' } });
    expect(rulesOnly.action).toBe('create'); // what the rules do: no "no longer", no word shared with the old job
    await ctx.runtime.deps.unitOfWork.forUser({ userId: user, work: (tx) => tx.memories.setStatus({ userId: user, id: rulesOnly.memoryId!, status: 'expired', at: said }) });

    let lockFree: boolean | undefined;
    const judge = scripted('{"action":"supersede","targets":["n1"],"reason":"changed jobs"}', async () => {
      const { rows } = await ctx.runtime.pool.query<{ free: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 42)) AS free', [user]);
      lockFree = rows[0]!.free;
      if (lockFree) await ctx.runtime.pool.query('SELECT pg_advisory_unlock(hashtextextended($1, 42))', [user]);
    });
    const applied = await applyCandidate({ ...ctx.runtime.deps, conflictJudge: judge }, { userId: user, candidate: candidate('Globex hired me last month'), key: 'judged', audit: { actor: 'test' } });
    expect(judge.calls).toBe(1);
    expect(lockFree).toBe(true);
    expect(applied).toMatchObject({ action: 'supersede', affectedIds: [initech], reason: 'llm:scripted: changed jobs' });
    expect(await status(user, initech!)).toBe('superseded');
    const history = await ctx.call('GET', `/v1/users/${name}/memories/${initech}/history`);
    expect(history.body.events.map((e: { action: string; reason: string }) => [e.action, e.reason])).toContainEqual(['superseded', expect.stringMatching(/^llm:scripted: changed jobs; replaced by /)]);

    // A retry of the same step replays the recorded decision; the model is not asked again.
    const again = await applyCandidate({ ...ctx.runtime.deps, conflictJudge: judge }, { userId: user, candidate: candidate('Globex hired me last month'), key: 'judged', audit: { actor: 'test' } });
    expect(again).toMatchObject({ action: 'supersede', replayed: true });
    expect(judge.calls).toBe(1);
  });

  it('falls back to the rules when the model’s target changed while it was deciding', async () => {
    const user = `${ctx.prefix}-stale`;
    const [city] = await seedMemories(ctx.runtime.deps, user, [{ text: 'I live in Berlin near the river' }]);
    const judge = scripted('{"action":"supersede","targets":["n1"],"reason":"moved"}', () =>
      ctx.runtime.deps.unitOfWork.forUser({ userId: user, work: (tx) => tx.memories.setStatus({ userId: user, id: city!, status: 'archived', at: said }) }).then(() => undefined),
    );
    const applied = await applyCandidate({ ...ctx.runtime.deps, conflictJudge: judge }, { userId: user, candidate: candidate('I live in Munich now'), key: 'k', audit: { actor: 'test' } });
    expect(applied.action).toBe('create');
    expect(applied.reason).toMatch(/\(rules decided: .*changed while .*deciding\)/);
    expect(await status(user, city!)).toBe('archived');
  });

  it('keeps the rails: a task-scoped statement never replaces a global one, whatever the model says', async () => {
    const user = `${ctx.prefix}-scope`;
    const [lang] = await seedMemories(ctx.runtime.deps, user, [{ text: '我平时写后端都用 Go 语言' }]);
    const judge = scripted('{"action":"supersede","targets":["n1"],"reason":"now Python"}');
    const applied = await applyCandidate({ ...ctx.runtime.deps, conflictJudge: judge }, { userId: user, candidate: candidate('这个需求的后端用 Python 语言写', { scope: 'task' }), key: 'k', audit: { actor: 'test' } });
    expect(judge.calls).toBe(1);
    expect(applied.action).toBe('create');
    expect(applied.reason).toContain('a task-scoped statement cannot replace a global memory');
    expect(await status(user, lang!)).toBe('active');
  });

  it('lets the rules decide on an unusable reply, and never asks about forget requests or repeats', async () => {
    const user = `${ctx.prefix}-rails`;
    const [tea] = await seedMemories(ctx.runtime.deps, user, [{ text: 'I drink green tea every morning' }]);
    const babble = scripted('Sounds like they like tea!');
    const applied = await applyCandidate({ ...ctx.runtime.deps, conflictJudge: babble }, { userId: user, candidate: candidate('I drink oolong tea in the afternoon'), key: 'k1', audit: { actor: 'test' } });
    expect(applied.reason).toMatch(/\(rules decided: llm:scripted reply unusable: no JSON object/);

    const never = scripted('{"action":"create","targets":[],"reason":"x"}');
    const repeat = await applyCandidate({ ...ctx.runtime.deps, conflictJudge: never }, { userId: user, candidate: candidate('I drink green tea every morning'), key: 'k2', audit: { actor: 'test' } });
    expect(repeat).toMatchObject({ action: 'reinforce', memoryId: tea });
    const forget = await applyCandidate({ ...ctx.runtime.deps, conflictJudge: never }, { userId: user, candidate: candidate('forget my tea habits', { intent: 'forget', subject: 'tea' }), key: 'k3', audit: { actor: 'test' } });
    expect(forget.action).toBe('forget');
    expect(never.calls).toBe(0);
  });
});
