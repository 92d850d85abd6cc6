import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PAGE_DECISIONS_PATCH, ONE_FINISH_PATCH } from '../workflows/conversation/extract-memories';
import { createTestContext, type TestContext } from './support/harness';

// ExtractMemories decides a page's candidates in one activity and ends a pass in one, behind
// patched(): runs that started deciding one candidate per activity must replay, and finish, as
// they began. The fixtures were recorded (RECORD_EXTRACT_HISTORIES=1) with the code before that
// change: a finished run, and the same run cut after its first decision (one still in flight).

type History = temporal.api.history.v1.IHistory;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { History: HistoryCodec } = temporal.api.history.v1;
const FIXTURES = join(import.meta.dirname, 'fixtures', 'extract-decisions-histories');

let ctx: TestContext;
let fresh: History;

/** Scheduled activity types, in order. */
const activityTypes = (h: History) => (h.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name ?? '?'] : []));

/** The patch ids of the history's patch markers (core writes them as JSON, unencrypted). */
function patchIds(h: History): string[] {
  return (h.events ?? []).flatMap((e) => {
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_patch') return [];
    return (m.details?.['patch-data']?.payloads ?? []).map((p) => (JSON.parse(Buffer.from(p.data!).toString()) as { id: string }).id);
  });
}

beforeAll(async () => {
  // Unencrypted payloads, so the recorded histories replay without this run's keys.
  ctx = await createTestContext({ PAYLOAD_ENCRYPTION: 'off' });
  const user = `${ctx.prefix}-replay`;
  const lines = ['I work as a nurse and I live in Lisbon.', 'I love hiking on weekends.', 'I am allergic to peanuts.', 'My goal is to run a marathon this year.'];
  const res = await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, {
    messages: lines.map((content, i) => ({ id: `m${i + 1}`, role: 'user', content, at: new Date(Date.UTC(2026, 5, 1, 10, 0, i * 20)).toISOString() })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect((await ctx.call('POST', `/v1/users/${user}/conversations/c1/end?wait=true`, {})).status).toBe(200);
  fresh = await ctx.runtime.temporal.workflow.getHandle(ctx.extractWorkflowId(user, 'c1')).fetchHistory();

  if (process.env.RECORD_EXTRACT_HISTORIES) {
    mkdirSync(FIXTURES, { recursive: true });
    writeFileSync(join(FIXTURES, 'per-candidate.binpb'), HistoryCodec.encode(fresh).finish());
    // In flight: up to the workflow task that follows the first decision's completion.
    const events = fresh.events!;
    const firstDecided = events.findIndex((e) => e.activityTaskCompletedEventAttributes && scheduledType(events, e) === 'decideCandidate');
    const nextTask = events.findIndex((e, i) => i > firstDecided && e.workflowTaskStartedEventAttributes);
    writeFileSync(join(FIXTURES, 'per-candidate-in-flight.binpb'), HistoryCodec.encode({ events: events.slice(0, nextTask + 1) }).finish());
  }
}, 180_000);

afterAll(async () => {
  await ctx?.close();
});

function scheduledType(events: HistoryEvent[], completed: HistoryEvent): string | undefined {
  const id = Number(completed.activityTaskCompletedEventAttributes!.scheduledEventId);
  return events.find((e) => Number(e.eventId) === id)?.activityTaskScheduledEventAttributes?.activityType?.name ?? undefined;
}

const recorded = (name: string): History => HistoryCodec.decode(readFileSync(join(FIXTURES, `${name}.binpb`)));

async function replay(histories: { workflowId: string; history: History }[]): Promise<{ workflowId: string; error?: string }[]> {
  const outcomes: { workflowId: string; error?: string }[] = [];
  const results = Worker.runReplayHistories({ workflowBundle: { code: inject('workflowBundle') }, dataConverter: ctx.runtime.dataConverter, replayName: 'extract-decisions-replay' }, histories);
  for await (const r of results) outcomes.push({ workflowId: r.workflowId, ...(r.error ? { error: String(r.error) } : {}) });
  return outcomes;
}

describe('ExtractMemories: decisions per page, behind patched()', () => {
  it('the recorded histories are runs that decided one candidate per activity and ended a pass with three', () => {
    const full = activityTypes(recorded('per-candidate'));
    expect(full.filter((t) => t === 'decideCandidate').length).toBeGreaterThanOrEqual(3);
    expect(full).not.toContain('decideCandidates');
    expect(full.slice(-3)).toEqual(['drainVectorOutbox', 'writeEpisodes', 'finishExtraction']);
    expect(patchIds(recorded('per-candidate'))).not.toContain(PAGE_DECISIONS_PATCH);
    expect(activityTypes(recorded('per-candidate-in-flight')).filter((t) => t === 'decideCandidate').length).toBeGreaterThanOrEqual(1);
  });

  it('replay against the current code, finished and in flight', async () => {
    const outcomes = await replay([
      { workflowId: 'per-candidate', history: recorded('per-candidate') },
      { workflowId: 'per-candidate-in-flight', history: recorded('per-candidate-in-flight') },
    ]);
    expect(outcomes).toHaveLength(2);
    expect(outcomes.filter((o) => o.error)).toEqual([]);
  });

  it('a run started now decides its page in one activity, ends its pass in one, and replays', async () => {
    expect(activityTypes(fresh)).toEqual(['extractPage', 'decideCandidates', 'finishPass']);
    expect(patchIds(fresh)).toEqual(expect.arrayContaining([PAGE_DECISIONS_PATCH, ONE_FINISH_PATCH]));
    const outcomes = await replay([{ workflowId: 'fresh', history: fresh }]);
    expect(outcomes.filter((o) => o.error)).toEqual([]);
  });

  it('would catch the change unguarded: the fresh history without the new patches does not replay', async () => {
    // The new patches' markers renamed and made deprecated (a deprecated marker with no patched()
    // call is skipped): patched() answers false on replay, the old path schedules decideCandidate
    // where the history has decideCandidates, and the replay must report nondeterminism.
    const ours = new Set([PAGE_DECISIONS_PATCH, ONE_FINISH_PATCH]);
    const events = fresh.events!.map((e) => {
      const m = e.markerRecordedEventAttributes;
      if (m?.markerName !== 'core_patch') return e;
      const payloads = m.details!['patch-data']!.payloads!.map((p) => {
        const data = JSON.parse(Buffer.from(p.data!).toString()) as { id: string };
        return ours.has(data.id) ? { ...p, data: Buffer.from(JSON.stringify({ id: `${data.id}-renamed`, deprecated: true })) } : p;
      });
      return { ...e, markerRecordedEventAttributes: { ...m, details: { ...m.details, 'patch-data': { payloads } } } };
    });
    const outcomes = await replay([{ workflowId: 'unguarded', history: { events } }]);
    expect(outcomes[0]?.error).toMatch(/Nondeterminism/);
    expect(outcomes[0]?.error).not.toMatch(/patch marker/);
  });
});
