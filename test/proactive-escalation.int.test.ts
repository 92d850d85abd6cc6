/**
 * M.1 and M.3 on the real stack: a rise in importance is surfaced once in the digest (and never for
 * a user who switched proactive messages off); a recall that hits an open goal nudges once, and a
 * second recall within the cool-down does not, nor does another user's memory id; a recall that
 * found neither hands the nudge check nothing.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { uuidFromKey } from '../src/shared/ids';
import { applyRecallReinforcement } from '../src/memory/reinforcement';
import { gatherDigest } from '../src/proactive/digest';
import { recallNudgeStateQuery, recallNudgeWorkflowId, type RecallNudgeState } from '../src/proactive/contract';
import { reinforcementWorkflowId } from '../src/memory/contract';
import { signalRecallHits } from '../src/proactive/recall-nudge-signal';
import { useTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';
import { newMemory, seedMemories } from './support/seed';

const slot = useTestContext();
let ctx: TestContext;
beforeAll(() => {
  ctx = slot.ctx;
});
const always = { enabled: true, probability: 1, maxPerDay: 5, quietHours: { start: '00:00', end: '00:00' } };

/** A fact said four times with urgency: one more mention takes it from medium to high (0.8). */
async function almostImportant(user: string): Promise<string> {
  const userId = ctx.userKey(user);
  const id = uuidFromKey(`escalate:${userId}`);
  const at = new Date(Date.now() - 60_000);
  await ctx.runtime.pool.query(`INSERT INTO users (user_id, tenant_id, external_id) VALUES ($1, 'tenant-a', $2) ON CONFLICT DO NOTHING`, [userId, user]);
  await ctx.runtime.deps.unitOfWork.forUser({
    userId,
    work: (tx) => tx.memories.insert(newMemory({ id, userId, text: '护照下周就过期了，续签这件事很急', at, frequencyCount: 4, importance: 0.6, importanceLevel: 'medium' })),
  });
  return id;
}

async function mentionAgain(user: string, id: string): Promise<void> {
  const userId = ctx.userKey(user);
  const done = await applyRecallReinforcement(ctx.runtime.deps, { userId, recalls: [{ memoryIds: [id], at: new Date().toISOString() }], batchKey: `t:${Math.random()}` });
  expect(done.reinforced).toBe(1);
  const after = await ctx.runtime.deps.memories.get({ userId, id });
  // The precondition of the test, not its subject: the write path really raised the level.
  expect(after).toMatchObject({ importanceLevel: 'high' });
  expect(after!.importance).toBeGreaterThanOrEqual(0.8);
}

const escalateEvents = async (user: string, id: string) =>
  (await ctx.runtime.deps.memoryEvents.history({ userId: ctx.userKey(user), memoryId: id })).filter((e) => e.action === 'escalate');

describe('M.1: a memory whose importance rises is surfaced', () => {
  it('in the digest, once per rise: the same day rewritten keeps it, the next day does not repeat it', async () => {
    const user = `${ctx.prefix}-rise`;
    await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC', proactive: always });
    const id = await almostImportant(user);
    const before = await ctx.call('POST', `/v1/users/${user}/digests`);
    expect(before.body.sections.escalatedMemories).toEqual([]);

    await mentionAgain(user, id);
    const written = await ctx.call('POST', `/v1/users/${user}/digests`);
    expect(written.status, JSON.stringify(written.body)).toBe(201);
    expect(written.body.sections.escalatedMemories).toMatchObject([{ id, fromLevel: 'medium', toLevel: 'high', text: '护照下周就过期了，续签这件事很急' }]);
    expect(written.body.text).toContain('📈 越来越重要');
    const events = await escalateEvents(user, id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: 'digest', after: { digestDate: written.body.date, fromLevel: 'medium', toLevel: 'high' } });

    // Written again today (a retry, the page's "digest now"): still listed, still one record.
    const again = await ctx.call('POST', `/v1/users/${user}/digests`);
    expect(again.body.sections.escalatedMemories.map((m: { id: string }) => m.id)).toEqual([id]);
    expect(await escalateEvents(user, id)).toHaveLength(1);
    // Tomorrow's digest does not surface the same rise again.
    const tomorrow = await gatherDigest(ctx.runtime.deps, ctx.userKey(user), new Date(Date.now() + 86_400_000));
    expect(tomorrow.escalatedMemories).toEqual([]);
  });

  it('never for a user who switched proactive messages off', async () => {
    const user = `${ctx.prefix}-rise-off`;
    await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC', proactive: { ...always, enabled: false } });
    const id = await almostImportant(user);
    await mentionAgain(user, id);
    const written = await ctx.call('POST', `/v1/users/${user}/digests`);
    expect(written.body.sections.escalatedMemories).toEqual([]);
    expect(written.body.text).not.toContain('越来越重要');
    expect(await escalateEvents(user, id)).toEqual([]);
    expect((await ctx.call('GET', `/v1/users/${user}/notifications`)).body.notifications).toEqual([]);
  });
});

describe('M.3: a recall that hits an open goal or pain point may nudge', () => {
  // The signal is fire-and-forget: until the workflow exists, there is nothing to query yet.
  const state = (user: string): Promise<RecallNudgeState> =>
    ctx.runtime.temporal.workflow
      .getHandle(recallNudgeWorkflowId(ctx.userKey(user)))
      .query(recallNudgeStateQuery)
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) return { batches: 0, pending: 1, recent: [] };
        throw err;
      });
  const nudges = async (user: string) => (await ctx.call('GET', `/v1/users/${user}/notifications?kind=nudge`)).body.notifications;
  const afterBatch = (user: string, n: number) => poll(() => state(user), (s) => s.batches >= n && s.pending === 0, 60_000);

  it('once: the recall is answered, a nudge follows; a second recall within the cool-down says nothing', async () => {
    const user = `${ctx.prefix}-goal`;
    await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC', proactive: always });
    const [goal] = await seedMemories(ctx.runtime.deps, ctx.userKey(user), [{ text: '年底前把 payment-svc 的 P99 降到 50ms 以下', type: 'goal', importance: 0.7, at: new Date() }]);

    const first = await ctx.call('POST', `/v1/users/${user}/recall`, { query: 'payment-svc 的 P99 怎么降' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.memories.map((m: { id: string }) => m.id)).toContain(goal);
    const said = await poll(() => nudges(user), (n: { body: string }[]) => n.length > 0, 60_000);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ kind: 'nudge', data: { trigger: 'goal_recalled', memoryId: goal } });
    expect(said[0]!.body).toContain('「年底前把 payment-svc 的 P99 降到 50ms 以下」');
    expect((await afterBatch(user, 1)).recent.at(-1)).toMatchObject({ delivered: true, decision: { send: true } });

    await ctx.call('POST', `/v1/users/${user}/recall`, { query: 'payment-svc 的 P99 怎么降' });
    const second = (await afterBatch(user, 2)).recent.at(-1)!;
    expect(second).toMatchObject({ delivered: false, decision: { send: false, reason: 'no-trigger' }, coolingDown: [goal] });
    expect(await nudges(user)).toHaveLength(1);
  });

  it("never about another user's memory, and never for a user who switched nudges off", async () => {
    const owner = `${ctx.prefix}-owner`;
    const other = `${ctx.prefix}-other`;
    const off = `${ctx.prefix}-off`;
    for (const u of [owner, other]) await ctx.call('PUT', `/v1/users/${u}/settings`, { timezone: 'UTC', proactive: always });
    await ctx.call('PUT', `/v1/users/${off}/settings`, { timezone: 'UTC', proactive: { ...always, enabled: false } });
    const [pain] = await seedMemories(ctx.runtime.deps, ctx.userKey(owner), [{ text: '部署流水线每周五都会失败', type: 'pain_point', at: new Date() }]);

    // The owner's id handed to another user's workflow (a forged or mixed-up signal) finds nothing.
    signalRecallHits(
      ctx.runtime.temporal,
      ctx.taskQueue,
      ctx.userKey(other),
      [pain!],
      new Date(),
      (err) => {
        throw err;
      },
      ctx.runtime.config.reliability.temporalCallMs,
    );
    expect((await afterBatch(other, 1)).recent.at(-1)).toMatchObject({ delivered: false, decision: { send: false, reason: 'no-trigger' }, coolingDown: [] });

    const [offPain] = await seedMemories(ctx.runtime.deps, ctx.userKey(off), [{ text: '部署流水线每周五都会失败', type: 'pain_point', at: new Date() }]);
    const recalled = await ctx.call('POST', `/v1/users/${off}/recall`, { query: '部署流水线为什么失败' });
    expect(recalled.body.memories.map((m: { id: string }) => m.id)).toContain(offPain);
    expect((await afterBatch(off, 1)).recent.at(-1)).toMatchObject({ delivered: false, decision: { send: false, reason: 'opted-out' } });
    for (const u of [owner, other, off]) expect(await nudges(u)).toEqual([]);
  });

  it('hands the nudge check nothing when the recall found no goal or pain point: only the reinforcement is signalled', async () => {
    const user = `${ctx.prefix}-plain`;
    await ctx.call('PUT', `/v1/users/${user}/settings`, { timezone: 'UTC', proactive: always });
    const seeded = await seedMemories(ctx.runtime.deps, ctx.userKey(user), [
      { text: 'payment-svc 的 P99 现在是 80ms', type: 'fact', at: new Date() },
      { text: 'I prefer dashboards that show payment-svc latency per region', type: 'preference', at: new Date() },
      { text: '上周五 payment-svc 发布后回滚了一次', type: 'event', at: new Date() },
      { text: 'We decided to move payment-svc to the new cluster', type: 'decision', at: new Date() },
    ]);
    const answer = await ctx.call('POST', `/v1/users/${user}/recall`, { query: 'payment-svc 最近怎么样 / how is payment-svc doing' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const recalled = answer.body.memories as { id: string; type: string }[];
    expect(recalled.length).toBeGreaterThan(1);
    for (const m of recalled) expect(seeded).toContain(m.id);
    // Both hand-overs leave together: once the reinforcement workflow has the recall, a nudge
    // signal sent beside it would have started the user's nudge workflow too.
    const reinforcement = ctx.runtime.temporal.workflow.getHandle(reinforcementWorkflowId(ctx.userKey(user)));
    await poll(() => reinforcement.describe().then(() => true, () => false), (found) => found, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await expect(ctx.runtime.temporal.workflow.getHandle(recallNudgeWorkflowId(ctx.userKey(user))).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });
});
