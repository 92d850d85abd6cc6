// An example chat workflow of a caller of jarvis-memory's Temporal contract
// (docs/integrate-temporal.md). It runs on the caller's own worker and task queue, with
// Temporal's default data converter, and talks to the memory service only through Temporal:
// the `recall` activity, the `ExtractMemories` workflow and the reminder signals.
// A real chat service imports the contract from the client package; this example imports it
// from the source tree.
import { executeChild, getExternalWorkflowHandle, ParentClosePolicy, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ChatMessage } from '../../src/client/index';
import {
  EXTRACT_MEMORIES_WORKFLOW,
  extractMemoriesWorkflowId,
  MEMORY_TASK_QUEUE,
  REMINDER_SIGNALS,
  type ExtractMemoriesResult,
  type ExtractMemoriesWorkflow,
  type MemoryActivities,
  type RecallActivityResult,
  type ReminderSnoozeInput,
} from '../../src/client/temporal-contract';

export interface ChatTurnInput {
  tenantId: string;
  /** The tenant's own id for the user. */
  userId: string;
  conversationId: string;
  /** What the user just said: recall runs for it. */
  query: string;
  /** This turn's messages (the user's and the assistant's reply), handed to memory after the reply. */
  messages: ChatMessage[];
  /** The recall's "now" (ISO); default: the memory service's clock. */
  now?: string;
  /** The user answered a reminder the memory service pushed: "稍后" (snooze) or "知道了" (dismiss). */
  reminderAnswer?: { workflowId: string; answer: 'snooze' | 'dismiss'; seconds?: number };
  /** The memory service's task queue (TEMPORAL_TASK_QUEUE there); default `jarvis-memory`. */
  memoryTaskQueue?: string;
}

export interface ChatTurnResult {
  recall: RecallActivityResult;
  extraction: ExtractMemoriesResult;
  answeredReminder?: string;
}

export async function chatTurnWorkflow(input: ChatTurnInput): Promise<ChatTurnResult> {
  const taskQueue = input.memoryTaskQueue ?? MEMORY_TASK_QUEUE;

  // 1. Recall before answering: an activity on the memory task queue, with a tight timeout.
  const memory = proxyActivities<MemoryActivities>({ taskQueue, startToCloseTimeout: '2s', retry: { maximumAttempts: 3 } });
  const recall = await memory.recall({ tenantId: input.tenantId, userId: input.userId, query: input.query, now: input.now });
  // ... the chat service's own LLM activity answers here, with recall.context.system and recall.context.userPrefix ...

  // 2. The user answered a reminder: signal its workflow directly.
  let answeredReminder: string | undefined;
  if (input.reminderAnswer) {
    const reminder = getExternalWorkflowHandle(input.reminderAnswer.workflowId);
    if (input.reminderAnswer.answer === 'snooze') {
      await reminder.signal<[ReminderSnoozeInput]>(REMINDER_SIGNALS.snooze, { seconds: input.reminderAnswer.seconds ?? 600 });
    } else {
      await reminder.signal(REMINDER_SIGNALS.dismiss, {});
    }
    answeredReminder = input.reminderAnswer.workflowId;
  }

  // 3. Hand the turn's messages to memory: ExtractMemories stores and extracts them (a child on
  //    the memory task queue; ABANDON lets it finish even if this turn ends first).
  const extraction = await executeChild<ExtractMemoriesWorkflow>(EXTRACT_MEMORIES_WORKFLOW, {
    taskQueue,
    workflowId: extractMemoriesWorkflowId(input.tenantId, workflowInfo().workflowId),
    args: [{ tenantId: input.tenantId, userId: input.userId, conversationId: input.conversationId, messages: input.messages }],
    parentClosePolicy: ParentClosePolicy.ABANDON,
  });
  // extraction.reminders: reminders the user asked for in these messages, with the workflow ids to signal later.

  return { recall, extraction, answeredReminder };
}
