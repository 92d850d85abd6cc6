import { MockActivityEnvironment } from '@temporalio/testing';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExtractionRunActivities, type KeyedDecision } from '../activities/conversation/extraction-runs';
import { keyCandidates, type KeyedCandidate } from '../src/conversation/extraction-runs';
import { candidateFromDTO } from '../src/core/dto';
import type { Embedder } from '../src/core/ports/memory';
import { createTestContext, type TestContext } from './support/harness';

// ExtractMemories decides a page's candidates in one activity (decideCandidates) and ends a pass
// in one (finishPass), on the real stack: every decision stays listed in Temporal (the activity's
// result, with its key), each is still its own keyed transaction (a retried page applies only
// what its earlier attempt did not), and the watermark moves with the page's last decision.

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

let ctx: TestContext;
const LINES = ['I work as a nurse and I live in Lisbon.', 'I love hiking on weekends.', 'I am allergic to peanuts.', 'My goal is to run a marathon this year.'];

beforeAll(async () => {
  // Unencrypted payloads, so the test reads the activities' inputs and results from the history.
  ctx = await createTestContext({ PAYLOAD_ENCRYPTION: 'off' });
});
afterAll(async () => {
  await ctx?.close();
});

async function post(user: string, conversation: string) {
  const res = await ctx.call('POST', `/v1/users/${user}/conversations/${conversation}/messages`, {
    messages: LINES.map((content, i) => ({ id: `m${i + 1}`, role: 'user', content, at: new Date(Date.UTC(2026, 5, 1, 10, 0, i * 20)).toISOString() })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
}

const json = (p: temporal.api.common.v1.IPayloads | null | undefined): any => JSON.parse(Buffer.from(p!.payloads![0]!.data!).toString());

/** Each scheduled activity with its type, summary, input and result. */
function activities(events: HistoryEvent[]) {
  return events.flatMap((e) => {
    const s = e.activityTaskScheduledEventAttributes;
    if (!s) return [];
    const done = events.find((c) => Number(c.activityTaskCompletedEventAttributes?.scheduledEventId) === Number(e.eventId));
    return [{ type: s.activityType!.name!, summary: e.userMetadata?.summary ? json({ payloads: [e.userMetadata.summary] }) : undefined, input: json(s.input), result: done ? json(done.activityTaskCompletedEventAttributes!.result) : undefined }];
  });
}

type Decided = { decisions: KeyedDecision[] };

let page: { workflowCandidates: KeyedCandidate[] };

describe('decisions per page on the real stack', () => {
  it('a run decides its page in one activity that lists every decision with its action, type and key', async () => {
    const user = `${ctx.prefix}-page`;
    await post(user, 'c1');
    const ended = await ctx.call('POST', `/v1/users/${user}/conversations/c1/end?wait=true`, {});
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    const result = ended.body.result as { decisions: { action: string; type: string; messageIds: string[] }[] };

    const handle = ctx.runtime.temporal.workflow.getHandle(ctx.extractWorkflowId(user, 'c1'));
    const acts = activities((await handle.fetchHistory()).events!);
    expect(acts.map((a) => a.type)).toEqual(['extractPage', 'decideCandidates', 'finishPass']);
    const [extracted, decided, finished] = acts as [(typeof acts)[number], (typeof acts)[number], (typeof acts)[number]];
    expect(extracted.result.candidates.length).toBeGreaterThanOrEqual(3);

    // The page's candidates in message order, the keys the extractor's output was stored under.
    expect(decided.input.candidates).toEqual(extracted.result.candidates);
    const listed = decided.result.decisions as KeyedDecision[];
    expect(listed.map((d) => d.key)).toEqual(extracted.result.candidates.map((c: KeyedCandidate) => c.key));
    expect(listed.map((d) => d.type)).toEqual(extracted.result.candidates.map((c: KeyedCandidate) => c.candidate.type));
    for (const d of listed) expect(d.action).toMatch(/^(ignore|create|reinforce|update|supersede|forget)$/);
    // The run's result keeps its shape (no keys), one entry per decision, same order.
    expect(result.decisions.map((d) => [d.action, d.type])).toEqual(listed.map((d) => [d.action, d.type]));
    expect(result.decisions.every((d) => !('key' in d))).toBe(true);
    // Temporal UI's line: how many, which types from which messages.
    expect(decided.summary).toMatch(new RegExp(`^decide ${listed.length}: `));
    for (const c of extracted.result.candidates as KeyedCandidate[]) expect(decided.summary).toContain(`${c.candidate.type} from ${c.candidate.messageIds.join(',')}`);
    // The actions' search attribute stays.
    const described = await handle.describe();
    expect(described.searchAttributes.MemoryDecisions).toEqual([...new Set(listed.map((d) => d.action))].sort());

    // One activity ended the pass: vectors, episodes, then the watermark at the newest message.
    expect(finished.result.watermark).toBe(LINES.length);
    expect(finished.result.more).toBe(false);
    expect(finished.result.episodes.episodes.length).toBeGreaterThanOrEqual(1);
    expect(finished.result.vectors).toBeDefined();
    const memories = await ctx.call('GET', `/v1/users/${user}/memories?status=active&limit=200`);
    expect(memories.body.memories.length).toBe(listed.filter((d) => d.action === 'create').length);

    page = { workflowCandidates: extracted.result.candidates };
  });

  it('a retried page applies only what its earlier attempt did not, in one embedder request, and moves the watermark with its last decision', async () => {
    const user = `${ctx.prefix}-retry`;
    await post(user, 'c1'); // not ended: no run of its own touches this conversation
    const userKey = ctx.userKey(user);
    const conversationId = 'c1';
    const candidates = keyCandidates(userKey, conversationId, page.workflowCandidates.map((c) => candidateFromDTO(c.candidate)));
    expect(candidates.length).toBeGreaterThanOrEqual(3);

    const requests: string[][] = [];
    const counting: Embedder = {
      embedQuery: (i) => ctx.runtime.deps.embedder.embedQuery(i),
      embedDocuments: (i) => (requests.push(i.texts), ctx.runtime.deps.embedder.embedDocuments(i)),
    };
    const acts = createExtractionRunActivities({ ...ctx.runtime.deps, embedder: counting });
    const env = (attempt: number) => new MockActivityEnvironment({ attempt, activityId: '7', workflowType: 'extractMemoriesWorkflow', workflowExecution: { workflowId: `extract-test:${user}`, runId: 'run-1' } });
    const watermark = async () => (await ctx.runtime.deps.extractionRuns.mark({ userId: userKey, conversationId }))!.extractedSeq;

    // The first attempt died after two decisions (they are committed; the page's watermark is not).
    const first: Decided = await env(1).run(acts.decideCandidates, { userId: userKey, conversationId, candidates: candidates.slice(0, 2) });
    expect(first.decisions.map((d) => d.replayed)).toEqual([false, false]);
    expect(await watermark()).toBe(0);

    // The retry gets the whole page: the two are replayed from their keys, the rest applied once.
    requests.length = 0;
    const retry = env(2);
    const beats: unknown[] = [];
    retry.on('heartbeat', (d: unknown) => beats.push(d));
    const second: Decided = await retry.run(acts.decideCandidates, { userId: userKey, conversationId, candidates, watermark: LINES.length });
    expect(second.decisions.map((d) => d.key)).toEqual(candidates.map((c) => c.key));
    expect(second.decisions.map((d) => d.replayed)).toEqual(candidates.map((_, i) => i < 2));
    expect(second.decisions.slice(0, 2).map((d) => [d.action, d.memoryId])).toEqual(first.decisions.map((d) => [d.action, d.memoryId]));
    expect(await watermark()).toBe(LINES.length);
    // A beat after each decision (more on the 5 s timer when it runs long).
    for (let i = 1; i <= candidates.length; i++) expect(beats).toContainEqual({ decided: i, of: candidates.length });
    // The page's texts went out together; no decision asked for its own text alone.
    const texts = new Set(candidates.map((c) => c.candidate.text));
    expect(requests[0]!.filter((t) => texts.has(t)).length).toBeGreaterThanOrEqual(2);
    expect(requests.filter((r) => r.length === 1 && texts.has(r[0]!))).toEqual([]);

    // A third attempt changes nothing: every decision replayed, no memory added.
    const before = (await ctx.call('GET', `/v1/users/${user}/memories?status=active&limit=200`)).body.memories.length;
    const third: Decided = await env(3).run(acts.decideCandidates, { userId: userKey, conversationId, candidates, watermark: LINES.length });
    expect(third.decisions.every((d) => d.replayed)).toBe(true);
    expect((await ctx.call('GET', `/v1/users/${user}/memories?status=active&limit=200`)).body.memories.length).toBe(before);
    expect(before).toBe(second.decisions.filter((d) => d.action === 'create').length);
  });
});
