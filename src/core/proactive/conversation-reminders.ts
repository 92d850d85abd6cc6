/**
 * Reminder requests in a conversation's user messages ("提醒我明天下午三点开会", "remind me on
 * Friday at 9 to call mom"), resolved against each message's own timestamp in the user's zone.
 * Pure; the reminder id is derived by the caller from user + conversation + message id, so the
 * same message can never yield two reminders.
 */
import { parseReminderRequest } from '../time/reminder-request';

export interface ConversationReminderRequest {
  messageId: string;
  text: string;
  dueAt: string;
  timeZone: string;
  rrule?: string;
  assumedTime: boolean;
  matched: string;
  saidAt: string;
}

/** What the reminder says when the message names no task ("明早8点叫我"). */
function fallbackText(matched: string): string {
  return matched.trim() || 'reminder';
}

export function detectReminderRequests(
  messages: readonly { id: string; role: string; content: string; at: Date }[],
  timeZone: string,
): ConversationReminderRequest[] {
  const out: ConversationReminderRequest[] = [];
  for (const m of messages) {
    if (m.role !== 'user') continue;
    const request = parseReminderRequest(m.content, { saidAt: m.at, timeZone });
    if (!request) continue;
    out.push({
      messageId: m.id,
      text: request.text || fallbackText(request.matched),
      dueAt: request.dueAt.toISOString(),
      timeZone,
      ...(request.rrule ? { rrule: request.rrule } : {}),
      assumedTime: request.assumedTime,
      matched: request.matched,
      saidAt: m.at.toISOString(),
    });
  }
  return out;
}
