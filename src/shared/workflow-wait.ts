import { ServiceError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ErrorCode, MemoryServiceError } from '../core/errors';

/**
 * Runs one or more Temporal calls with a deadline, so a request never hangs on an unreachable
 * Temporal: past `ms` the calls fail (gRPC DEADLINE_EXCEEDED) like any other Temporal error.
 */
export function withTemporalDeadline<T>(client: Client, ms: number, fn: () => Promise<T>): Promise<T> {
  return client.connection.withDeadline(Date.now() + ms, fn);
}

/**
 * Waits up to `ms` for a workflow's result. `{ done: false }` when the time ran out: the workflow
 * goes on, and the caller answers 202 with its id. The pending long poll is cancelled, not left
 * running. `{ done: false }` too when Temporal stops answering during the wait (killed, restarted,
 * the network cut): the workflow was started and is durable, so it goes on after recovery just as
 * one that outlasts the wait (before, POST …/end?wait=true answered 500 and POST …/memories 503
 * "nothing stored" for work that then landed). Errors of the workflow are thrown as they are; a
 * run that no longer exists (a purge deleted it) is a 409 `conflict` with reason `user_purged`.
 */
export async function waitForResult<T>(client: Client, result: () => Promise<T>, ms: number): Promise<{ done: true; result: T } | { done: false }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    // The abort ends the long poll; the deadline also bounds the client's retries should Temporal
    // go away mid-wait (src/stack/temporal-connection.ts: no backoff is slept past it).
    return { done: true, result: await client.connection.withAbortSignal(controller.signal, () => client.connection.withDeadline(Date.now() + ms, result)) };
  } catch (err) {
    if (controller.signal.aborted || err instanceof ServiceError) return { done: false };
    // The run this request started or joined existed a moment ago; only the purge deletes
    // executions, so it went with the user's data (before: 503 "retry", or 500).
    if (err instanceof WorkflowNotFoundError) {
      throw new MemoryServiceError(ErrorCode.conflict, "the user's data was purged while this request ran", { reason: 'user_purged' }, { cause: err });
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
