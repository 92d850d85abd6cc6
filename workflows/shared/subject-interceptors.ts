import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInput, LocalActivityInput, Next, WorkflowInterceptorsFactory, WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';
import { SUBJECT_HEADER, workflowSubject } from './payload-subject';

function withSubjectHeader<I extends ActivityInput | LocalActivityInput>(input: I): I {
  const subject = workflowSubject();
  if (!subject) return input;
  return { ...input, headers: { ...input.headers, [SUBJECT_HEADER]: defaultPayloadConverter.toPayload(subject) } };
}

/**
 * Every activity this workflow schedules carries the workflow's user in a header: the activity
 * worker has no other way to know whose data key encrypts the activity's result
 * (src/security/payload-subject.ts reads it). Bundled through `workflowInterceptorModules`.
 */
class SubjectHeaderInterceptor implements WorkflowOutboundCallsInterceptor {
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    return next(withSubjectHeader(input));
  }

  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>): Promise<unknown> {
    return next(withSubjectHeader(input));
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ outbound: [new SubjectHeaderInterceptor()] });
