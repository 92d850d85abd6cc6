import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { expect, it } from 'vitest';
import { OfflineExtractor } from '../src/adapters/extraction/offline-extractor';
import type { Extractor } from '../src/core/ports/conversation';
import { extractionReconcilerWorkflow, vectorOutboxWorkflow } from '../workflows';
import { createTestContext } from './support/harness';
import { poll } from './support/poll';

// Records the histories of issue #14's code paths for test/workflow-replay.int.test.ts, with
// RECORD_HISTORIES=1 only: a conversation workflow whose idle timer fired during a running
// extraction (it waited, then ran its own), a watermark run that took a second pass for a message
// that arrived meanwhile, and both reconcilers. Payload encryption is off: a recorded history must
// replay without this run's per-user keys.
const FIXTURES = join(import.meta.dirname, 'fixtures', 'histories');
const { History: HistoryCodec } = temporal.api.history.v1;

it.runIf(process.env.RECORD_HISTORIES)('records histories of the reliability code paths (unencrypted)', async () => {
  const ctx = await createTestContext({ PAYLOAD_ENCRYPTION: 'off', CONVERSATION_IDLE_SECONDS: '2' });
  try {
    const inner = new OfflineExtractor();
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let calls = 0;
    let inFlight = 0;
    // The end call's extraction is held in its first extractor call until the late message is in.
    const held: Extractor = {
      name: 'offline-rules',
      async extract(input) {
        calls++;
        inFlight++;
        if (calls === 1) await gate;
        inFlight--;
        return inner.extract(input);
      },
    };
    ctx.runtime.deps.extractor = held;
    const user = `${ctx.prefix}-rec`;
    const post = (id: string, content: string) => ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, { id, role: 'user', content, at: '2026-06-01T10:00:00+08:00' });
    expect((await post('m1', '我住在杭州。')).status).toBe(202);
    const ended = await ctx.call('POST', `/v1/users/${user}/conversations/c1/end`, {});
    await poll(async () => inFlight, (n) => n > 0, 15_000, 50);
    const late = (await post('m2', '我的目标是年底前跑完马拉松。')).body;
    const history = async (id: string, runId?: string) => ctx.runtime.temporal.workflow.getHandle(id, runId).fetchHistory();
    await poll(() => history(late.workflowId), (h) => (h.events ?? []).some((e) => e.startChildWorkflowExecutionFailedEventAttributes), 20_000, 250);
    open();
    await ctx.runtime.temporal.workflow.getHandle(late.workflowId).result();
    await ctx.runtime.temporal.workflow.getHandle(ended.body.workflowId, ended.body.runId).result();
    writeFileSync(join(FIXTURES, 'conversationWorkflow-follow-up.binpb'), HistoryCodec.encode(await history(late.workflowId)).finish());
    writeFileSync(join(FIXTURES, 'extractMemoriesWorkflow-watermark.binpb'), HistoryCodec.encode(await history(ended.body.workflowId, ended.body.runId)).finish());
    await ctx.runtime.temporal.workflow.execute(extractionReconcilerWorkflow, { taskQueue: ctx.taskQueue, workflowId: `rec-reconcile:${ctx.prefix}`, args: [{}] });
    await ctx.runtime.temporal.workflow.execute(vectorOutboxWorkflow, { taskQueue: ctx.taskQueue, workflowId: `rec-drain:${ctx.prefix}`, args: [{}] });
    writeFileSync(join(FIXTURES, 'extractionReconcilerWorkflow.binpb'), HistoryCodec.encode(await history(`rec-reconcile:${ctx.prefix}`)).finish());
    writeFileSync(join(FIXTURES, 'vectorOutboxWorkflow.binpb'), HistoryCodec.encode(await history(`rec-drain:${ctx.prefix}`)).finish());
  } finally {
    await ctx.close();
  }
}, 120_000);
