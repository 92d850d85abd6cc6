import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { ReminderWorkflowInput } from './proactive-inputs';
import { reminderWorkflow, reminderWorkflowId } from './reminder';
import { ReminderStatusKey, userSearchAttributes } from '../shared/search-attributes';

/**
 * Starts the ReminderWorkflow for a reminder found in a conversation, from a parent workflow
 * (ExtractMemories). Idempotent: the reminder id is derived from user + conversation + message,
 * and REJECT_DUPLICATE makes a second start fail even after the first run closed, so a re-run of
 * extraction finds the existing reminder instead of creating another. ABANDON: the reminder
 * outlives the extraction that found it.
 */
export async function startReminderChild(input: ReminderWorkflowInput): Promise<'started' | 'exists'> {
  try {
    await startChild(reminderWorkflow, {
      workflowId: reminderWorkflowId(input.userId, input.reminderId),
      args: [input],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [...userSearchAttributes(input.userId), { key: ReminderStatusKey, value: 'scheduled' }],
      staticSummary: `Reminder due ${input.dueAt} (${input.timeZone})${input.rrule ? `, repeats ${input.rrule}` : ''}, from a conversation`,
    });
    return 'started';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'exists';
    throw err;
  }
}
