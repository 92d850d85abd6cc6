import { uuidFromKey } from '../shared/ids';
import { scanPage } from '../shared/rule-work';
import { detectReminderRequests, type ConversationReminderRequest } from '../core/proactive/conversation-reminders';
import type { ReminderWorkflowInput } from './contract';
import type { ServiceDeps } from '../shared/deps';
import { userTimeZone } from '../account/settings';

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
  return reminderRequestsFrom(userId, conversationId, detectReminderRequests(messages, timeZone), ackWindowSeconds);
}

/** The same requests from detections already made (the extraction run's rule pool finds them). */
export function reminderRequestsFrom(userId: string, conversationId: string, detected: readonly ConversationReminderRequest[], ackWindowSeconds: number): ReminderRequestDTO[] {
  return detected.map((r) => ({
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

/**
 * Reads every message of one of the user's conversations in arrival order, page by page
 * (`onPage` after each, e.g. a heartbeat). The conversation owns its messages and sits above
 * proactive, so its caller hands this reader in (the conversation's `allConversationMessages`).
 */
export type ConversationMessagesReader = (input: { userId: string; conversationId: string; onPage?: (afterSeq: number) => void }) => Promise<
  readonly { id: string; role: string; content: string; at: Date }[]
>;

/**
 * The reminder requests of a whole conversation, in the user's zone: the same detection and the
 * same deterministic ids as the extraction that started their workflows.
 */
export async function conversationReminderRequests(
  deps: Pick<ServiceDeps, 'settings' | 'config' | 'rules'>,
  readMessages: ConversationMessagesReader,
  input: { userId: string; conversationId: string; onPage?: (afterSeq: number) => void },
): Promise<ReminderRequestDTO[]> {
  const timeZone = await userTimeZone(deps, input.userId);
  const messages = await readMessages(input);
  // The time patterns run on the rule pool, each message with its time limit: a message whose
  // rules fail there (the one extraction quarantines) gives no reminder instead of stalling the loop.
  const users = messages.filter((m) => m.role === 'user').map((m) => ({ id: m.id, role: 'user' as const, content: m.content, at: m.at }));
  const scan = await scanPage(deps.rules, users, timeZone, false);
  const detected = users.flatMap((m) => scan.plans.get(m.id)?.reminders ?? []);
  return reminderRequestsFrom(input.userId, input.conversationId, detected, deps.config.proactive.reminderAckSeconds);
}
