import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { createDecisionActivities } from '../activities/memory/decisions';
import { ErrorCode, MemoryServiceError } from '../src/core/errors';
import type { MemoryEraser, MemoryEraseResult } from '../src/core/ports/memory';
import type { ServiceDeps } from '../src/shared/deps';
import { fakeDeps } from './support/fakes';

// The MemoryDecision activity (memory) erases through the MemoryEraser port it is given, which the
// privacy capability implements: the activity imports no privacy code.

const input = { userKey: 'u1', memoryId: 'mem-1', action: 'erase' as const, actor: 'api', requestedAt: '2026-06-10T08:00:00.000Z' };
const counts = { events: 3, messages: 2, messageTerms: 5, entities: 1, digests: 0, notifications: 0 };
const env = (attempt = 1) => new MockActivityEnvironment({ attempt, workflowExecution: { workflowId: 'decision:u1:mem-1', runId: 'run-1' } });

function eraser(answer: () => Promise<MemoryEraseResult>) {
  const calls: Parameters<MemoryEraser['eraseMemory']>[0][] = [];
  const port: MemoryEraser = {
    eraseMemory: async (i) => {
      calls.push(i);
      return answer();
    },
  };
  return { port, calls };
}

describe('MemoryDecision erase: through the memory-owned eraser port', () => {
  it('hands the port the user, memory, time and actor, and reports what it erased', async () => {
    const { deps } = fakeDeps();
    const { port, calls } = eraser(async () => ({ id: 'mem-1', erased: true, removed: counts, vectorRemoved: true, conversations: ['c1'], episodesRebuilt: true }));
    const acts = createDecisionActivities(deps as unknown as ServiceDeps, { eraser: port });
    const out = await env().run(acts.applyMemoryDecision, input);
    expect(calls).toEqual([{ userKey: 'u1', id: 'mem-1', now: new Date(input.requestedAt), actor: 'api' }]);
    expect(out).toEqual({ action: 'erase', memoryId: 'mem-1', removed: counts, vectorRemoved: true, conversations: ['c1'], episodesRebuilt: true });
  });

  it("a first attempt's not_found from the port stays a typed, non-retryable refusal", async () => {
    const { deps } = fakeDeps();
    const { port } = eraser(async () => {
      throw new MemoryServiceError(ErrorCode.notFound, 'memory not found', { id: 'mem-1' });
    });
    const acts = createDecisionActivities(deps as unknown as ServiceDeps, { eraser: port });
    await expect(env().run(acts.applyMemoryDecision, input)).rejects.toMatchObject({ type: ErrorCode.notFound, nonRetryable: true });
  });
});
