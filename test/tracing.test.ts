import { context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import { runRoutes } from '../src/recall/route-runner';
import { tracer } from '../src/observability/tracing';
import { installTracing } from '../src/observability/tracing-sdk';

// Issue #24 item 2, the part built so far: each recall route is a span, under the request's span
// (one trace id), with the route as its only attribute — no user id.

const exporter = new InMemorySpanExporter();
const provider = installTracing({ exporter });
afterAll(async () => {
  await provider.shutdown();
});

describe('recall route spans', () => {
  it('records one span per route under the caller span, failures marked, no user id', async () => {
    const USER = 'tenant-a:USERKEY0123456789ABCDEFGHIJ';
    const parent = tracer.startSpan('POST /v1/users/:userId/recall');
    const settled = await context.with(trace.setSpan(context.active(), parent), () =>
      runRoutes(
        [
          { route: 'bm25', run: async () => [`${USER}-m1`] },
          { route: 'ann', run: async () => Promise.reject(new Error(`chroma down for ${USER}`)) },
        ],
        { deadline: Date.now() + 5000, hits: (v: string[]) => v.length },
      ),
    );
    parent.end();
    expect(settled.failures.map((f) => f.route)).toEqual(['ann']);
    const spans = exporter.getFinishedSpans();
    const routes = spans.filter((s) => s.name.startsWith('recall.route'));
    expect(routes.map((s) => s.name).sort()).toEqual(['recall.route ann', 'recall.route bm25']);
    for (const s of routes) {
      expect(s.spanContext().traceId).toBe(parent.spanContext().traceId);
      expect(s.parentSpanId).toBe(parent.spanContext().spanId);
    }
    expect(routes.find((s) => s.name === 'recall.route ann')!.status.code).toBe(2);
    expect(JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events })))).not.toContain(USER);
  });
});

describe('span scrubbing', () => {
  it('lets only the closed-set attributes leave: no workflow id, search attributes or exception text', () => {
    const TEXT = 'my password is hunter2';
    const span = tracer.startSpan('RunWorkflow:extractMemoriesWorkflow', {
      attributes: { workflowType: 'extractMemoriesWorkflow', workflowId: 'extract:tenant-a:USERKEY:conv', runId: 'r-1', searchAttributes: 'MemoryUserId=tenant-a:USERKEY' },
    });
    span.recordException(new TypeError(TEXT));
    span.setStatus({ code: 2, message: TEXT });
    span.end();
    const out = exporter.getFinishedSpans().find((s) => s.name === 'RunWorkflow:extractMemoriesWorkflow')!;
    expect(out.attributes).toEqual({ workflowType: 'extractMemoriesWorkflow', runId: 'r-1' });
    expect(out.events.map((e) => e.attributes)).toEqual([{ 'exception.type': 'TypeError' }]);
    expect(out.status).toEqual({ code: 2 });
    expect(out.spanContext().traceId).toBe(span.spanContext().traceId);
  });
});
