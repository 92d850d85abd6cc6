import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, CancelledFailure, ChildWorkflowFailure, defaultFailureConverter, defaultPayloadConverter, RetryState, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../activities';
import { NON_RETRYABLE_CODES, toActivityFailure, withTypedFailures } from '../activities/shared/failures';
import { createCallerExtractionActivities, type CallerDeps } from '../activities/conversation/callers';
import { createDecisionActivities } from '../activities/memory/decisions';
import { createPrivacyActivities, type PurgeTemporal } from '../activities/privacy/privacy';
import { createRecallActivities } from '../activities/recall/recall';
import { installErrorHandling } from '../src/api/errors';
import { causeChain, serviceErrorOfWorkflowFailure, workflowCallError } from '../src/api/workflow-failures';
import { loadConfig } from '../src/config';
import { ErrorCode, httpStatusFor, MemoryServiceError } from '../src/core/errors';
import type { ServiceDeps } from '../src/shared/deps';
import { waitForResult } from '../src/shared/workflow-wait';
import type { MemoryEraser } from '../src/core/ports/memory';

const env = () => new MockActivityEnvironment({ workflowExecution: { workflowId: 'wf-1', runId: 'run-1' } });

/** What an activity's failure looks like after the trip through Temporal (proto and back). */
function overTheWire(err: unknown): Error {
  return defaultFailureConverter.failureToError(defaultFailureConverter.errorToFailure(err, defaultPayloadConverter), defaultPayloadConverter);
}

/** The chain a client sees when a workflow failed because one of its activities did. */
function workflowFailedBy(activityFailure: Error, retryState: RetryState = RetryState.NON_RETRYABLE_FAILURE): WorkflowFailedError {
  return new WorkflowFailedError('Workflow execution failed', new ActivityFailure('Activity task failed', 'gatherDigest', '1', retryState, 'worker', activityFailure), retryState);
}

describe('activity side: MemoryServiceError → typed ApplicationFailure', () => {
  it.each([...NON_RETRYABLE_CODES])('%s is not retried', async (code) => {
    const act = withTypedFailures({
      async failing(_input: { id: string }): Promise<void> {
        throw new MemoryServiceError(code, 'refused', { id: 'm1' });
      },
    });
    const failure = await env().run(act.failing, { id: 'm1' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: code, nonRetryable: true, message: 'refused', details: [{ id: 'm1' }] });
    expect((failure as ApplicationFailure).cause).toBeInstanceOf(MemoryServiceError);
  });

  it.each([ErrorCode.dependencyTimeout, ErrorCode.vectorStoreUnavailable, ErrorCode.databaseUnavailable, ErrorCode.embedderUnavailable, ErrorCode.workflowUnavailable, ErrorCode.llmUnavailable, ErrorCode.rateLimited, ErrorCode.internal])(
    '%s is retried',
    async (code) => {
      const failure = toActivityFailure(new MemoryServiceError(code, 'down'));
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure).toMatchObject({ type: code, nonRetryable: false });
      expect((failure as ApplicationFailure).nextRetryDelay).toBeUndefined();
    },
  );

  it('a dependency that says when to come back sets the next retry delay', () => {
    expect(toActivityFailure(new MemoryServiceError(ErrorCode.rateLimited, 'slow down', { retryAfterSeconds: 7 }))).toMatchObject({ nextRetryDelay: 7000, nonRetryable: false });
    expect(toActivityFailure(new MemoryServiceError(ErrorCode.llmUnavailable, 'busy', { retryAfterMs: 1500 }))).toMatchObject({ nextRetryDelay: 1500 });
    // A refusal is final whatever it says about time.
    expect(toActivityFailure(new MemoryServiceError(ErrorCode.notFound, 'gone', { retryAfterSeconds: 7 }))).toMatchObject({ nonRetryable: true, nextRetryDelay: undefined });
  });

  it('leaves other failures to Temporal: a raw error stays retryable, an ApplicationFailure keeps its own flags', async () => {
    const raw = new Error('ECONNRESET');
    const own = ApplicationFailure.create({ message: 'outside a workflow', nonRetryable: true });
    const act = withTypedFailures({
      async raw(): Promise<void> {
        throw raw;
      },
      async own(): Promise<void> {
        throw own;
      },
      async fine(n: number): Promise<number> {
        return n + 1;
      },
    });
    await expect(env().run(act.raw)).rejects.toBe(raw);
    await expect(env().run(act.own)).rejects.toBe(own);
    await expect(env().run(act.fine, 1)).resolves.toBe(2);
  });

  it('every activity the worker registers fails typed (no factory left unwrapped)', async () => {
    const notFound = () => {
      throw new MemoryServiceError(ErrorCode.notFound, 'probe');
    };
    // Dependencies and inputs that refuse on first touch: whatever an activity reads first, it fails
    // with a MemoryServiceError, and the boundary must turn that into a non-retryable not_found.
    const config = loadConfig({});
    const deps = new Proxy({ config } as unknown as ServiceDeps, { get: (t, k) => (k === 'config' ? t.config : notFound()) });
    const temporal = new Proxy({} as PurgeTemporal, { get: notFound });
    const input = new Proxy({}, { get: notFound, ownKeys: notFound, has: notFound, getOwnPropertyDescriptor: notFound });
    const callers = new Proxy({} as CallerDeps, { get: notFound });
    // The same factories, in the same set, as the worker in src/runtime.ts.
    const activities = {
      ...createActivities(deps),
      ...createPrivacyActivities(deps, temporal),
      ...createDecisionActivities(deps, { eraser: new Proxy({} as MemoryEraser, { get: notFound }) }),
      ...createCallerExtractionActivities(deps, callers),
      ...createRecallActivities(deps, callers),
    } as unknown as Record<string, (arg: unknown) => Promise<unknown>>;
    expect(Object.keys(activities).length).toBeGreaterThanOrEqual(30);
    for (const name of ['applyMemoryDecision', 'resolveCallerConversation', 'storeCallerMessages', 'conversationReminders', 'recall']) expect(activities).toHaveProperty(name);
    for (const [name, fn] of Object.entries(activities)) {
      const failure = await env()
        .run(fn, input)
        .then(() => undefined, (e: unknown) => e);
      expect({ name, failure }).toMatchObject({ name, failure: { type: ErrorCode.notFound, nonRetryable: true } });
    }
  });
});

describe('API side: WorkflowFailedError → cause chain → ApplicationFailure.type → HTTP status', () => {
  it('a typed activity failure, across the wire and through the workflow, maps back to its code and status', async () => {
    const act = withTypedFailures({
      async gatherDigest(): Promise<void> {
        throw new MemoryServiceError(ErrorCode.notFound, 'unknown user', { userId: 'tenant-a:abc' });
      },
    });
    const thrown = await env()
      .run(act.gatherDigest)
      .catch((e: unknown) => e);
    const err = workflowFailedBy(overTheWire(thrown));
    const chain = causeChain(err);
    expect(chain[0]).toBe(err);
    expect(chain[1]).toBeInstanceOf(ActivityFailure);
    expect(chain[2]).toMatchObject({ type: ErrorCode.notFound, nonRetryable: true });
    expect(chain.length).toBeGreaterThanOrEqual(3);
    const mapped = workflowCallError(err, { workflowId: 'digest:x', failed: 'writing the digest failed' });
    expect(mapped).toMatchObject({ code: ErrorCode.notFound, message: 'unknown user', context: { userId: 'tenant-a:abc', workflowId: 'digest:x' } });
    expect(httpStatusFor(mapped.code)).toBe(404);
  });

  it('reads the type through a child workflow too', () => {
    const child = new ChildWorkflowFailure('default', { workflowId: 'c', runId: 'r' }, 'ReminderWorkflow', RetryState.NON_RETRYABLE_FAILURE, ApplicationFailure.create({ type: ErrorCode.invalidState, message: 'reminder is dismissed', nonRetryable: true }));
    const mapped = serviceErrorOfWorkflowFailure(new WorkflowFailedError('failed', child, RetryState.NON_RETRYABLE_FAILURE), 'failed');
    expect(mapped.code).toBe(ErrorCode.invalidState);
    expect(httpStatusFor(mapped.code)).toBe(409);
  });

  it('a retryable dependency failure that ran out of attempts keeps its type (503/504)', () => {
    const lastAttempt = overTheWire(toActivityFailure(new MemoryServiceError(ErrorCode.vectorStoreUnavailable, 'chroma down')));
    expect(workflowCallError(workflowFailedBy(lastAttempt, RetryState.MAXIMUM_ATTEMPTS_REACHED), { failed: 'x' }).code).toBe(ErrorCode.vectorStoreUnavailable);
    const timedOut = new WorkflowFailedError('failed', new ActivityFailure('timed out', 'decideAndApply', '1', RetryState.TIMEOUT, 'w', new TimeoutFailure('START_TO_CLOSE', undefined, 'START_TO_CLOSE')), RetryState.TIMEOUT);
    expect(workflowCallError(timedOut, { failed: 'x' }).code).toBe(ErrorCode.dependencyTimeout);
  });

  it('an untyped failure is internal with the route message; a non-workflow error means Temporal is unavailable', () => {
    const bug = workflowFailedBy(overTheWire(new TypeError('undefined is not a function')), RetryState.MAXIMUM_ATTEMPTS_REACHED);
    expect(workflowCallError(bug, { workflowId: 'w', failed: 'storing the memory failed' })).toMatchObject({ code: ErrorCode.internal, message: 'storing the memory failed', context: { workflowId: 'w' } });
    // A run stopped by another request (a purge terminates the user's workflows) is no bug: 409.
    expect(workflowCallError(new WorkflowFailedError('terminated', new TerminatedFailure('purged'), RetryState.NON_RETRYABLE_FAILURE), { failed: 'x' }).code).toBe(ErrorCode.conflict);
    expect(workflowCallError(new WorkflowFailedError('cancelled', new CancelledFailure('cancelled'), RetryState.NON_RETRYABLE_FAILURE), { failed: 'x' }).code).toBe(ErrorCode.conflict);
    // An ApplicationFailure type that is not one of ours (an SDK or library error name) is not trusted.
    expect(workflowCallError(workflowFailedBy(ApplicationFailure.create({ type: 'Error', message: 'boom' })), { failed: 'x' }).code).toBe(ErrorCode.internal);
    expect(workflowCallError(new Error('14 UNAVAILABLE'), { workflowId: 'w', failed: 'x' })).toMatchObject({ code: ErrorCode.workflowUnavailable, context: { workflowId: 'w' } });
  });

  it('a run the purge deleted is a 409 that says so, whether it was terminated under the wait or already gone', async () => {
    // The server terminates a running execution it deletes with this reason; only the purge deletes.
    const deleted = new WorkflowFailedError('terminated', new TerminatedFailure('Delete workflow execution'), RetryState.NON_RETRYABLE_FAILURE);
    expect(workflowCallError(deleted, { workflowId: 'w', failed: 'x' })).toMatchObject({ code: ErrorCode.conflict, context: { workflowId: 'w', reason: 'user_purged' } });
    // An operator's terminate stays a plain conflict: nothing says the user was purged.
    expect(workflowCallError(new WorkflowFailedError('terminated', new TerminatedFailure('operator'), RetryState.NON_RETRYABLE_FAILURE), { failed: 'x' }).context.reason).toBeUndefined();
    const connection = { withAbortSignal: (_signal: AbortSignal, fn: () => Promise<unknown>) => fn(), withDeadline: (_deadline: number, fn: () => Promise<unknown>) => fn() };
    const gone = waitForResult({ connection } as unknown as Client, () => Promise.reject(new WorkflowNotFoundError('not found', 'w', undefined)), 1000);
    await expect(gone).rejects.toMatchObject({ code: ErrorCode.conflict, context: { reason: 'user_purged' } });
  });

  it('a run that outlived a purge and lost its payload key is a 409, not a bug', () => {
    // Started after the purge terminated the user's runs: its activity's arguments cannot be decrypted any more.
    const shredded = workflowFailedBy(ApplicationFailure.create({ type: 'DataKeyDestroyedError', message: 'data key destroyed: payload key k was crypto-shredded' }), RetryState.MAXIMUM_ATTEMPTS_REACHED);
    expect(workflowCallError(shredded, { workflowId: 'w', failed: 'storing the memory failed' })).toMatchObject({ code: ErrorCode.conflict, context: { workflowId: 'w', reason: 'user_purged' } });
  });

  it('the error handler answers a write that lost its user to a purge with 409, not 500', async () => {
    const app = Fastify();
    installErrorHandling(app);
    app.post('/write', async () => {
      throw Object.assign(new Error('insert or update on table "conversations" violates foreign key constraint "conversations_user_id_fkey"'), {
        code: '23503',
        detail: 'Key (user_id)=(dev:abc) is not present in table "users".',
      });
    });
    const res = await app.inject({ method: 'POST', url: '/write' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: { code: 'conflict', details: { reason: 'user_purged' } } });
    await app.close();
  });

  it('the error handler answers a workflow failure a route let through with its status', async () => {
    const app = Fastify();
    installErrorHandling(app);
    app.get('/wait', async () => {
      throw workflowFailedBy(overTheWire(toActivityFailure(new MemoryServiceError(ErrorCode.notFound, 'conversation has no messages', { conversationId: 'c1' }))));
    });
    const res = await app.inject({ method: 'GET', url: '/wait' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'not_found', message: 'conversation has no messages', details: { conversationId: 'c1' } } });
    await app.close();
  });
});
