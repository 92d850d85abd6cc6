// A chat service without workflows of its own: a plain Temporal client with Temporal's defaults
// (no data converter) starts ExtractMemories and answers reminders — no HTTP call.
import type { Client } from '@temporalio/client';
import {
  EXTRACT_MEMORIES_WORKFLOW,
  extractMemoriesWorkflowId,
  MEMORY_TASK_QUEUE,
  REMINDER_SIGNALS,
  type ExtractMemoriesInput,
  type ExtractMemoriesResult,
  type ExtractMemoriesWorkflow,
  type ReminderSnoozeInput,
} from '../../src/client/temporal-contract';

/** Stores a turn's messages and extracts memories from the conversation; resolves with every decision. */
export async function extractTurn(client: Client, input: ExtractMemoriesInput, turnId: string, taskQueue = MEMORY_TASK_QUEUE): Promise<ExtractMemoriesResult> {
  const handle = await client.workflow.start<ExtractMemoriesWorkflow>(EXTRACT_MEMORIES_WORKFLOW, {
    taskQueue,
    workflowId: extractMemoriesWorkflowId(input.tenantId, turnId),
    args: [input],
  });
  return handle.result();
}

/** "稍后" / "知道了" on a reminder; the workflow id comes from ExtractMemories' result or the reminders API. */
export async function answerReminder(client: Client, workflowId: string, answer: 'snooze' | 'dismiss', seconds = 600): Promise<void> {
  const handle = client.workflow.getHandle(workflowId);
  if (answer === 'snooze') await handle.signal<[ReminderSnoozeInput]>(REMINDER_SIGNALS.snooze, { seconds });
  else await handle.signal(REMINDER_SIGNALS.dismiss, {});
}
