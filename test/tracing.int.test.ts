import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { installTracing } from '../src/observability/tracing-sdk';
import { createTestContext, type TestContext } from './support/harness';

// Issue #24 item 2 on the real stack: one chat message, the end of its conversation and a recall,
// sent under one caller trace (W3C traceparent), are recorded as ONE trace: the HTTP spans, the
// workflow's start, its run in the worker, its activities, and the recall's route spans.

const exporter = new InMemorySpanExporter();
// Before the runtime: it keeps a provider already installed (the OTLP one would export nowhere).
installTracing({ exporter });

const USER = 'trace-user-5d1c';
const TEXT = 'I am allergic to peanuts.';
let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext({ OTEL_TRACES: 'otlp' });
}, 120_000);
afterAll(async () => {
  await ctx?.close();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

async function waitForSpans(done: (spans: ReadableSpan[]) => boolean, timeoutMs: number): Promise<ReadableSpan[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const spans = exporter.getFinishedSpans();
    if (done(spans) || Date.now() > until) return spans;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('one chat message, traced end to end', () => {
  it('links the HTTP spans, workflow start, workflow run, activities and recall routes in the caller trace', async () => {
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const headers = { traceparent: `00-${traceId}-${callerSpanId}-01` };

    const sent = await ctx.call('POST', `/v1/users/${USER}/conversations/c1/messages`, { messages: [{ id: 'm1', role: 'user', content: TEXT }] }, headers);
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const ended = await ctx.call('POST', `/v1/users/${USER}/conversations/c1/end?wait=true`, {}, headers);
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    const recalled = await ctx.call('POST', `/v1/users/${USER}/recall`, { query: 'what am I allergic to?' }, headers);
    expect(recalled.status, JSON.stringify(recalled.body)).toBe(200);

    // The workflow's spans reach the exporter through the worker's sink, after its last activation.
    const all = await waitForSpans((s) => s.some((x) => x.name === 'RunWorkflow:extractMemoriesWorkflow' && x.spanContext().traceId === traceId), 30_000);
    const spans = all.filter((s) => s.spanContext().traceId === traceId);
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const parentOf = (s: ReadableSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
    const names = spans.map((s) => s.name);

    // The HTTP server spans: children of the caller's span, named by route template.
    const http = spans.filter((s) => s.attributes['http.route'] !== undefined);
    expect(http.map((s) => s.name).sort()).toEqual([
      'POST /v1/users/:userId/conversations/:conversationId/end',
      'POST /v1/users/:userId/conversations/:conversationId/messages',
      'POST /v1/users/:userId/recall',
    ]);
    for (const s of http) expect(s.parentSpanId).toBe(callerSpanId);

    // HTTP → workflow start (client) → workflow run: the message's conversation workflow, and the
    // extraction the end starts; then its activities: start (in the workflow) → run (in the worker).
    const chain = (workflow: string, clientSpan: RegExp, route: string) => {
      const run = spans.find((s) => s.name === `RunWorkflow:${workflow}`);
      expect(run, names.join('\n')).toBeDefined();
      const start = parentOf(run!);
      expect(start?.name, names.join('\n')).toMatch(clientSpan);
      expect(parentOf(start!)?.name).toBe(route);
      return run!;
    };
    chain('conversationWorkflow', /^SignalWithStartWorkflow:conversationWorkflow$/, 'POST /v1/users/:userId/conversations/:conversationId/messages');
    const extraction = chain('extractMemoriesWorkflow', /^(StartWorkflow|SignalWithStartWorkflow):extractMemoriesWorkflow$/, 'POST /v1/users/:userId/conversations/:conversationId/end');
    const activityRuns = spans.filter((s) => s.name.startsWith('RunActivity:') && parentOf(parentOf(s)!) === extraction);
    expect(activityRuns.map((s) => s.name), names.join('\n')).toEqual(expect.arrayContaining(['RunActivity:extractPage', 'RunActivity:finishPass']));
    for (const a of activityRuns) expect(parentOf(a)!.name).toBe(a.name.replace('RunActivity:', 'StartActivity:'));

    // The recall request's route spans, under its HTTP span.
    const recallHttp = http.find((s) => s.name === 'POST /v1/users/:userId/recall')!;
    const routes = spans.filter((s) => s.name.startsWith('recall.route '));
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) {
      let up: ReadableSpan | undefined = r;
      while (up && up !== recallHttp) up = parentOf(up);
      expect(up, r.name).toBe(recallHttp);
    }

    // Closed sets only: no user id, key or text in any name or attribute.
    const exported = JSON.stringify(all.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })));
    expect(exported).not.toContain(USER);
    expect(exported).not.toContain(ctx.userKey(USER));
    expect(exported).not.toContain('peanuts');
  }, 120_000);

  it('replays the traced histories without nondeterminism (the workflow decides to trace from its own history)', async () => {
    const extractId = ctx.extractWorkflowId(USER, 'c1');
    const ids = [extractId, extractId.replace(/^extract:/u, 'conversation:')];
    const histories = await Promise.all(ids.map(async (workflowId) => ({ workflowId, history: await ctx.runtime.temporal.workflow.getHandle(workflowId).fetchHistory() })));
    for (const { history } of histories) {
      expect(Object.keys(history.events?.[0]?.workflowExecutionStartedEventAttributes?.header?.fields ?? {})).toContain('_tracer-data');
    }
    const outcomes: { workflowId: string; error?: string }[] = [];
    const results = Worker.runReplayHistories({ workflowBundle: { code: inject('workflowBundle') }, dataConverter: ctx.runtime.dataConverter, replayName: 'traced-replay' }, histories);
    for await (const r of results) outcomes.push({ workflowId: r.workflowId, ...(r.error ? { error: String(r.error) } : {}) });
    expect(outcomes).toEqual(ids.map((workflowId) => ({ workflowId })));
  }, 120_000);
});
