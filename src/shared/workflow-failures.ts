/**
 * The caller side of the failure boundary (services and API routes). An activity fails with an `ApplicationFailure` whose
 * `type` is a service error code (activities/shared/failures.ts); the workflow fails with it as a cause
 * (`WorkflowFailedError → ActivityFailure → ApplicationFailure`, or through a child workflow).
 * Here the chain is walked back to that code, so a workflow that failed with `not_found` answers
 * 404 and not 500. Every service and route that waits on a workflow, and the API's error handler for the
 * ones that do not catch, go through {@link workflowCallError}.
 */
import { metrics } from '../observability/metrics';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import { ErrorCode, MemoryServiceError } from '../core/errors';

const CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/** The reason Temporal's server gives a running execution it terminates because it is being deleted. */
const DELETED_BY_SERVER = 'Delete workflow execution';

function isErrorCode(type: string | null | undefined): type is ErrorCode {
  return typeof type === 'string' && CODES.has(type);
}

/** `err` and its causes, outermost first (bounded: a cause chain is short, a cycle is a bug). */
export function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && chain.length < 16 && !chain.includes(e); e = (e as { cause?: unknown }).cause) {
    chain.push(e);
    if (typeof e !== 'object') break;
  }
  return chain;
}

function contextOf(failure: ApplicationFailure): Record<string, unknown> {
  const first = failure.details?.[0];
  return first !== null && typeof first === 'object' && !Array.isArray(first) ? { ...(first as Record<string, unknown>) } : {};
}

/**
 * The service error a failed workflow stands for: the outermost `ApplicationFailure` in its cause
 * chain whose `type` is a service error code, with that failure's message and context; a
 * workflow or activity that ran out of time is `dependencyTimeout`; a run terminated or cancelled
 * before it finished (a purge of the user stops their running workflows; an operator) is
 * `conflict`: another request ended the work this one waited on, nothing failed. Anything else
 * (a bug) is `internal` with `message`.
 */
export function serviceErrorOfWorkflowFailure(err: WorkflowFailedError, message: string, context: Record<string, unknown> = {}): MemoryServiceError {
  const failure = classifyWorkflowFailure(err, message, context);
  metrics.workflowFailure(failure.code);
  return failure;
}

function classifyWorkflowFailure(err: WorkflowFailedError, message: string, context: Record<string, unknown>): MemoryServiceError {
  const chain = causeChain(err);
  const typed = chain.find((e): e is ApplicationFailure => e instanceof ApplicationFailure && isErrorCode(e.type));
  if (typed) return new MemoryServiceError(typed.type as ErrorCode, typed.message, { ...contextOf(typed), ...context }, { cause: err });
  if (chain.some((e) => e instanceof TimeoutFailure)) return new MemoryServiceError(ErrorCode.dependencyTimeout, `${message}: timed out`, context, { cause: err });
  // A run the purge did not stop (started after it terminated the user's workflows) fails on its
  // activity's payload once the user's data key is destroyed: that too is the erasure, not a bug.
  if (chain.some((e) => e instanceof ApplicationFailure && e.type === 'DataKeyDestroyedError')) {
    return new MemoryServiceError(ErrorCode.conflict, `${message}: the user's data was purged while this request ran`, { ...context, reason: 'user_purged' }, { cause: err });
  }
  // Only the purge deletes executions (src/privacy/user-purge.ts), and a running one that is
  // deleted is terminated by the server with this reason: the client can be told why.
  if (chain.some((e) => e instanceof TerminatedFailure && e.message === DELETED_BY_SERVER)) {
    return new MemoryServiceError(ErrorCode.conflict, `${message}: the user's data was purged while this request ran`, { ...context, reason: 'user_purged' }, { cause: err });
  }
  if (chain.some((e) => e instanceof TerminatedFailure || e instanceof CancelledFailure)) {
    return new MemoryServiceError(ErrorCode.conflict, `${message}: the workflow was stopped before it finished (the user's data was purged, or an operator stopped it)`, context, { cause: err });
  }
  return new MemoryServiceError(ErrorCode.internal, message, context, { cause: err });
}

/**
 * What a route throws when a call into Temporal failed: the workflow's own failure, read by
 * {@link serviceErrorOfWorkflowFailure}; a service error unchanged; anything else means Temporal
 * could not be reached (`workflowUnavailable`).
 */
export function workflowCallError(err: unknown, opts: { workflowId?: string; failed: string; unavailable?: string }): MemoryServiceError {
  const context = opts.workflowId ? { workflowId: opts.workflowId } : {};
  if (err instanceof WorkflowFailedError) return serviceErrorOfWorkflowFailure(err, opts.failed, context);
  if (err instanceof MemoryServiceError) return err;
  return new MemoryServiceError(ErrorCode.workflowUnavailable, opts.unavailable ?? 'Temporal unavailable', context, { cause: err });
}
