import { z } from 'zod';
import { MAX_SNOOZE_SECONDS, MIN_SNOOZE_SECONDS, REMINDER_STATUSES } from '../core/proactive/reminder-state';
import { requestIdSchema, textSchema, userIdSchema } from './schemas';

const clock = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24 h)');

export const reminderParams = z.object({ userId: userIdSchema, id: z.string().uuid() });

// Request bodies refuse keys they do not know (400 naming the key): a misspelt field
// ("recurrence" for "rrule", "digest_time") was dropped and the request half-done with a 2xx.
export const createReminderBody = z.strictObject({
  text: textSchema(500),
  /** ISO 8601; without an offset it is wall-clock time in `timezone`. */
  dueAt: z.string().min(10).max(40),
  /** IANA zone; defaults to the user's timezone setting. */
  timezone: z.string().min(1).max(64).optional(),
  /** RFC 5545 RRULE ("FREQ=DAILY;BYHOUR=8;BYMINUTE=0"); the series starts at dueAt. */
  rrule: z.string().min(5).max(500).optional(),
  /** Client-chosen id that makes retries of this request idempotent. */
  requestId: requestIdSchema.optional(),
});

export const listRemindersQuery = z.object({
  status: z.enum(REMINDER_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const snoozeBody = z.strictObject({ seconds: z.number().int().min(MIN_SNOOZE_SECONDS).max(MAX_SNOOZE_SECONDS) });
export const rescheduleBody = z.strictObject({ dueAt: z.string().min(10).max(40) });

export const reminderView = z.object({
  id: z.string(),
  text: z.string(),
  status: z.enum(REMINDER_STATUSES),
  dueAt: z.string(),
  timezone: z.string(),
  rrule: z.string().optional(),
  assumedTime: z.boolean(),
  occurrence: z.number(),
  fireCount: z.number(),
  snoozeCount: z.number(),
  /** The workflow's change counter this view mirrors: of two views of one reminder, the higher version is newer. */
  version: z.number(),
  firedAt: z.string().optional(),
  snoozedUntil: z.string().optional(),
  dismissedAt: z.string().optional(),
  source: z.record(z.string(), z.unknown()),
  workflowId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const notificationView = z.object({
  id: z.string(),
  seq: z.number(),
  kind: z.enum(['reminder', 'digest', 'nudge']),
  title: z.string(),
  body: z.string(),
  reminderId: z.string().optional(),
  data: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  readAt: z.string().optional(),
});

export const listNotificationsQuery = z.object({
  kind: z.enum(['reminder', 'digest', 'nudge']).optional(),
  unread: z.enum(['true', 'false']).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const proactiveSettingsSchema = z.object({
  enabled: z.boolean(),
  probability: z.number().min(0).max(1),
  maxPerDay: z.number().int().min(0).max(50),
  quietHours: z.object({ start: clock, end: clock }),
});

export const settingsView = z.object({ timezone: z.string(), digestTime: clock, proactive: proactiveSettingsSchema });

/** Every field optional: what is given replaces the stored value, the rest stays. */
export const settingsBody = z.strictObject({
  timezone: z.string().min(1).max(64).optional(),
  digestTime: clock.optional(),
  // The stored settings' fields, each optional, and no others (a new setting is accepted here as it is added there).
  proactive: z.strictObject({ ...proactiveSettingsSchema.partial().shape, quietHours: z.strictObject({ start: clock, end: clock }).optional() }).optional(),
});

export const digestsQuery = z.object({ days: z.coerce.number().int().min(1).max(90).default(7) });

export const digestView = z.object({
  date: z.string(),
  timezone: z.string(),
  text: z.string(),
  sections: z.record(z.string(), z.unknown()),
  generatedBy: z.enum(['llm', 'template']),
  createdAt: z.string(),
  updatedAt: z.string(),
});
