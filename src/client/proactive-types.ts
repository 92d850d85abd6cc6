/** Client-side shapes of the proactive-memory endpoints (reminders, notifications, settings, digests). */

export type ReminderStatus = 'scheduled' | 'snoozed' | 'fired' | 'dismissed' | 'cancelled';

export interface ReminderView {
  id: string;
  text: string;
  status: ReminderStatus;
  dueAt: string;
  timezone: string;
  rrule?: string;
  assumedTime: boolean;
  occurrence: number;
  fireCount: number;
  snoozeCount: number;
  /** The workflow's change counter: of two views of one reminder, the higher version is newer. */
  version: number;
  firedAt?: string;
  snoozedUntil?: string;
  dismissedAt?: string;
  source: { via?: 'api' | 'conversation'; conversationId?: string; messageId?: string; matched?: string; requestId?: string };
  workflowId: string;
  createdAt: string;
  updatedAt: string;
  /** Only on a create answered 202: stored, and its workflow starts once Temporal answers (snooze, dismiss and cancel answer 409 until then). */
  pending?: true;
}

export interface CreateReminderRequest {
  text: string;
  /** ISO 8601; without an offset it is wall-clock time in `timezone` (default: the user's). */
  dueAt: string;
  timezone?: string;
  rrule?: string;
  requestId?: string;
}

/**
 * The answer to snooze/dismiss/cancel (and a reschedule that took long): with `reminder` (HTTP
 * 200) the list already shows the workflow's state after the change; without (202) the workflow
 * has it and the list follows shortly.
 */
export interface ReminderActionAccepted {
  id: string;
  accepted: true;
  action: 'snooze' | 'dismiss' | 'cancel' | 'reschedule';
  workflowId: string;
  reminder?: ReminderView;
}

export interface NotificationView {
  id: string;
  seq: number;
  kind: 'reminder' | 'digest' | 'nudge';
  title: string;
  body: string;
  reminderId?: string;
  data: Record<string, unknown>;
  createdAt: string;
  readAt?: string;
}

export interface ProactiveSettings {
  enabled: boolean;
  probability: number;
  maxPerDay: number;
  quietHours: { start: string; end: string };
}

export interface UserSettingsView {
  timezone: string;
  digestTime: string;
  proactive: ProactiveSettings;
}

export interface DigestView {
  date: string;
  timezone: string;
  text: string;
  sections: Record<string, unknown>;
  generatedBy: 'llm' | 'template';
  createdAt: string;
  updatedAt: string;
}
