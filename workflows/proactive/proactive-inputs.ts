import type { DigestSections } from '../../src/core/proactive/digest-content';
import type { NudgeDecision } from '../../src/core/proactive/nudge-policy';
import type { ReminderSource } from '../../src/core/proactive/reminder-state';

/** Everything a ReminderWorkflow needs; recurring reminders continue as new with the next occurrence. */
export interface ReminderWorkflowInput {
  userId: string;
  reminderId: string;
  text: string;
  /** This occurrence's due time (ISO). */
  dueAt: string;
  timeZone: string;
  /** RFC 5545 RRULE for recurring reminders, expanded in `timeZone` wall-clock time. */
  rrule?: string;
  /** The recurrence's anchor (first occurrence), ISO. */
  seriesStart?: string;
  /** The user named no time of day and a default was used ("明天提醒我" → 09:00). */
  assumedTime?: boolean;
  source: ReminderSource;
  /** 1-based; counts up across continue-as-new. */
  occurrence?: number;
  /** How long a fired reminder waits for snooze/dismiss before the workflow closes (injectable for tests). */
  ackWindowSeconds?: number;
  /**
   * The previous occurrence's final state version (set by continue-as-new): the series' version
   * counts on across runs, so the row only ever moves forward. Absent on a series' first run.
   */
  stateVersion?: number;
}

/** The reminder's signal and update payloads, as callers send them (src/client/temporal-contract.ts). */
export type { RescheduleInput, SnoozeInput } from '../../src/client/temporal-contract';

export type DismissInput = Record<string, never>;

export interface DigestWorkflowInput {
  userId: string;
  /** Push the digest as a notification (the schedule does; a digest asked for on the page does not). */
  notify?: boolean;
}

export interface DigestWorkflowResult {
  userId: string;
  date: string;
  text: string;
  sections: DigestSections;
  generatedBy: 'llm' | 'template';
  notified: boolean;
}

export interface NudgeWorkflowInput {
  userId: string;
}

export interface NudgeWorkflowResult {
  decision: NudgeDecision;
  delivered: boolean;
  notificationId?: string;
}
