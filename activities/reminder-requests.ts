import { uuidFromKey } from '../src/adapters/ids';
import { detectReminderRequests } from '../src/core/proactive/conversation-reminders';
import type { ReminderWorkflowInput } from '../workflows/proactive-types';

/** A reminder request found in a conversation, ready to start its ReminderWorkflow. */
export type ReminderRequestDTO = ReminderWorkflowInput;

/**
 * Reminder requests in a page of a conversation's messages ("提醒我明天下午三点开会"), resolved
 * against each message's own time in the user's zone. The id comes from user + conversation +
 * message, so re-running extraction yields the same reminder, never a second one.
 */
export function reminderRequestsOf(
  userId: string,
  conversationId: string,
  messages: readonly { id: string; role: string; content: string; at: Date }[],
  timeZone: string,
  ackWindowSeconds: number,
): ReminderRequestDTO[] {
  return detectReminderRequests(messages, timeZone).map((r) => ({
    userId,
    reminderId: uuidFromKey(`reminder:${userId}:${conversationId}:${r.messageId}`),
    text: r.text,
    dueAt: r.dueAt,
    timeZone: r.timeZone,
    ...(r.rrule ? { rrule: r.rrule, seriesStart: r.dueAt } : {}),
    assumedTime: r.assumedTime,
    source: { via: 'conversation', conversationId, messageId: r.messageId, matched: r.matched },
    ackWindowSeconds,
  }));
}
