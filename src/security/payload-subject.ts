import { AsyncLocalStorage } from 'node:async_hooks';
import { asyncLocalStorage as activityContext, type Context } from '@temporalio/activity';
import type { ClientInterceptors, WorkflowClientInterceptor } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { CALLER_ACTIVITY_TYPES, SUBJECT_HEADER, subjectFromSearchAttributes } from '../../workflows/shared/payload-subject';

// Node side of "whose payload is this?" (the sandbox side is workflows/shared/payload-subject.ts). The
// encryption codec calls `ambientSubject()` for payloads that arrive without a subject tag:
//   - API / client: the `withSubject(userKey, …)` scope, or — set automatically by the client
//     interceptors below — the MemoryUserId search attribute of the workflow or schedule started;
//   - activities: the subject header the scheduling workflow attached (workflows/shared/subject-interceptors.ts),
//     remembered per activity context; results and failures are encoded inside that context.
// Never imported by workflow code: AsyncLocalStorage must not reach the workflow bundle.

const scope = new AsyncLocalStorage<string>();
const activitySubjects = new WeakMap<Context, string>();

/** Runs `fn` with `userKey` as the subject of every payload the Temporal client encodes inside it. */
export function withSubject<T>(userKey: string, fn: () => T): T {
  return scope.run(userKey, fn);
}

/** The subject of payloads encoded here and now, outside workflow code; undefined: the system key applies. */
export function ambientSubject(): string | undefined {
  const explicit = scope.getStore();
  if (explicit !== undefined) return explicit;
  const activity = activityContext.getStore();
  return activity ? activitySubjects.get(activity) : undefined;
}

/**
 * Whether payloads encoded here and now cross to a caller's worker and must stay in clear: the
 * result and failure of an activity of the Temporal contract (CALLER_ACTIVITY_TYPES), which a
 * caller's workflow scheduled and decodes with Temporal's default converter. In workflow code the
 * sandbox converter marks such payloads itself (workflows/shared/payload-converter.ts).
 */
export function crossesToCaller(): boolean {
  if (scope.getStore() !== undefined) return false;
  const activity = activityContext.getStore();
  return activity !== undefined && CALLER_ACTIVITY_TYPES.has(activity.info.activityType);
}

/** Worker activity interceptor: takes the subject from the header the workflow set when it scheduled the activity. */
export const subjectActivityInterceptor: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const header = input.headers[SUBJECT_HEADER];
      if (header) {
        const subject = defaultPayloadConverter.fromPayload<unknown>(header);
        if (typeof subject === 'string' && subject) activitySubjects.set(ctx, subject);
      }
      return next(input);
    },
  },
});

/** Runs `next` in the subject's scope unless the caller set one explicitly. */
function inScopeOf<T>(subject: string | undefined, next: () => Promise<T>): Promise<T> {
  return subject && scope.getStore() === undefined ? scope.run(subject, next) : next();
}

const workflowInterceptor: WorkflowClientInterceptor = {
  startWithDetails: (input, next) => inScopeOf(subjectFromSearchAttributes(input.options.typedSearchAttributes, input.options.searchAttributes), () => next(input)),
  signalWithStart: (input, next) => inScopeOf(subjectFromSearchAttributes(input.options.typedSearchAttributes, input.options.searchAttributes), () => next(input)),
  startUpdateWithStart: (input, next) =>
    inScopeOf(subjectFromSearchAttributes(input.workflowStartOptions.typedSearchAttributes, input.workflowStartOptions.searchAttributes), () => next(input)),
};

/**
 * Client interceptors: a workflow or schedule started with `MemoryUserId` has its arguments (and
 * the signal of a signal-with-start) encrypted with that user's key, without the caller having to
 * say so. Signals, updates and queries to a running workflow carry no search attributes: they use
 * the `withSubject` scope when there is one, else the system key.
 */
export const subjectClientInterceptors: ClientInterceptors = {
  workflow: [workflowInterceptor],
  schedule: [
    {
      create: (input, next) => {
        const action = input.options.action;
        const subject =
          ('typedSearchAttributes' in action || 'searchAttributes' in action ? subjectFromSearchAttributes(action.typedSearchAttributes, action.searchAttributes) : undefined) ??
          subjectFromSearchAttributes(input.options.typedSearchAttributes, input.options.searchAttributes);
        return inScopeOf(subject, () => next(input));
      },
    },
  ],
};
