/**
 * The proactive capability's Temporal contract: what a caller needs to start, signal, update and
 * query a reminder, run a digest or schedule digests and nudges by name — type names, ids,
 * signals, update, query and the input/result types — without importing the workflows, whose
 * activities type-import the proactive use cases back (that closed the import circle through
 * `workflows/index.ts`). Names come from the public Temporal contract
 * (`src/client/temporal-contract.ts`); the reminder workflow takes its handlers' definitions from
 * here and re-exports them, so the bundle and the recorded histories are unchanged
 * (test/capability-contracts.test.ts holds them equal).
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { QueryName, SignalName, UpdateName, WorkflowType } from '../client/temporal-contract';
import type { RescheduleInput, SnoozeInput } from '../client/temporal-contract';
import type { DigestSections } from '../core/proactive/digest-content';
import type { NudgeDecision } from '../core/proactive/nudge-policy';
import type { ReminderSource, ReminderState } from '../core/proactive/reminder-state';

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
export type { RescheduleInput, SnoozeInput } from '../client/temporal-contract';

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

/** Memory ids one recall returned, as the recall path hands them over. */
export interface RecallHitsInput {
  memoryIds: string[];
  /** When the recall happened (ISO). */
  at: string;
}

/** One batch of recalls and what came of it, as the state query shows it. */
export interface RecallNudgeOutcome {
  batch: number;
  decision: NudgeDecision;
  delivered: boolean;
  /** The delivery transaction's refusal (opted out, quiet hours, daily cap, cool-down, said today). */
  reason?: string;
  notificationId?: string;
  /** Recalled goals and pain points held back by the cool-down. */
  coolingDown: string[];
  /** Refused only by quiet hours: decided again at this instant (ISO), the window's end; the next outcome of the same batch says how. */
  deferredUntil?: string;
}

export interface RecallNudgeWorkflowInput {
  userId: string;
  /** How long recalls are gathered before one decision is taken about them (injectable for tests). */
  flushSeconds?: number;
  /** Carried over by continue-as-new. */
  pending?: RecallHitsInput[];
  batches?: number;
  recent?: RecallNudgeOutcome[];
}

export interface RecallNudgeState {
  batches: number;
  pending: number;
  /** The latest outcomes, newest last (at most 20). */
  recent: RecallNudgeOutcome[];
}

/** Workflow type names, as the worker registers them. */
export const ProactiveWorkflows = {
  reminder: WorkflowType.reminder,
  digest: WorkflowType.digest,
  nudge: WorkflowType.nudge,
  recallNudge: WorkflowType.recallNudge,
} as const;

/** The workflows' signatures, for typed starts by name. */
export type ReminderWorkflow = (input: ReminderWorkflowInput) => Promise<ReminderState>;
export type DigestWorkflow = (input: DigestWorkflowInput) => Promise<DigestWorkflowResult>;
export type NudgeWorkflow = (input: NudgeWorkflowInput) => Promise<NudgeWorkflowResult>;
export type RecallNudgeWorkflow = (input: RecallNudgeWorkflowInput) => Promise<void>;

export const snoozeSignal = defineSignal<[SnoozeInput]>(SignalName.snooze);
export const dismissSignal = defineSignal<[DismissInput?]>(SignalName.dismiss);
export const rescheduleUpdate = defineUpdate<ReminderState, [RescheduleInput]>(UpdateName.reschedule);
export const stateQuery = defineQuery<ReminderState>(QueryName.reminderState);
export const recallHitsSignal = defineSignal<[RecallHitsInput]>('recallHitsSignal');
export const recallNudgeStateQuery = defineQuery<RecallNudgeState>('recallNudgeState');

/** Workflow id of a user's recall nudges: one per user, like the reinforcement workflow. */
export function recallNudgeWorkflowId(userId: string): string {
  return `recall-nudge:${userId}`;
}

/** Workflow id of a reminder: one workflow per reminder, readable in Temporal UI. */
export function reminderWorkflowId(userId: string, reminderId: string): string {
  return `reminder:${userId}:${reminderId}`;
}
