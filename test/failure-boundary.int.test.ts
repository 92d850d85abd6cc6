import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/harness';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
});

afterAll(async () => {
  await ctx?.close();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a workflow that fails with a typed failure answers with its status through the API', () => {
  it('not_found in an activity fails the workflow at once and the API answers 404, not 500', async () => {
    const user = 'vanishing-user';
    const userKey = ctx.userKey(user);
    // No worker yet: the digest workflow waits while its user disappears, so the route's own
    // check passes and the not_found comes from the gatherDigest activity.
    await ctx.stopWorker();
    const answer = ctx.call('POST', `/v1/users/${user}/digests`);
    const workflowId = await until('the digest workflow to start', async () => {
      for await (const w of ctx.runtime.temporal.workflow.list({ query: `MemoryUserId = '${userKey}' AND WorkflowType = 'digestWorkflow'` })) return w.workflowId;
      return undefined;
    });
    await ctx.runtime.pool.query('DELETE FROM users WHERE user_id = $1', [userKey]);
    const started = Date.now();
    await ctx.startWorker();

    const res = await answer;
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'not_found', message: 'unknown user', details: { workflowId } });
    // Non-retryable: no ten attempts with back-off before the answer.
    expect(Date.now() - started).toBeLessThan(20_000);

    const failure = await ctx.runtime.temporal.workflow
      .getHandle(workflowId)
      .result()
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const activity = (failure as WorkflowFailedError).cause;
    expect(activity).toBeInstanceOf(ActivityFailure);
    expect((activity as ActivityFailure).retryState).toBe(RetryState.NON_RETRYABLE_FAILURE);
    expect((activity as ActivityFailure).cause).toBeInstanceOf(ApplicationFailure);
    expect((activity as ActivityFailure).cause).toMatchObject({ type: 'not_found', nonRetryable: true });
  });
});
