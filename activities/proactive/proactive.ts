/**
 * Activities of the proactive workflows (reminders, digests, nudges). Times come from the
 * workflow (`at`), so a time-skipped test and a replay record the same instants.
 */
import { Context } from '@temporalio/activity';
import { renderDigestTemplate, type DigestSections } from '../../src/core/proactive/digest-content';
import type { NudgeTrigger } from '../../src/core/proactive/nudge-triggers';
import type { NudgeMessage } from '../../src/core/proactive/nudge-wording';
import type { ReminderState } from '../../src/core/proactive/reminder-state';
import type { UserSettings } from '../../src/core/proactive/settings';
import type { ServiceDeps } from '../../src/shared/deps';
import { gatherDigest, storeDigest } from '../../src/proactive/digest';
import { writeDigest, type WrittenDigest } from '../../src/proactive/digest-writer';
import { deliverNudge, loadNudgeContext } from '../../src/proactive/nudges';
import { loadRecallNudgeContext, type RecallNudgeContext } from '../../src/proactive/recall-nudges';
import { RECALL_NUDGE_COOLDOWN_HOURS } from '../../src/core/proactive/recall-nudge';
import { fireReminder, recordReminder, saveReminderState } from '../../src/proactive/reminder-rows';
import type { ReminderWorkflowInput } from '../../src/proactive/contract';
import { withTypedFailures } from '../shared/failures';

export function createProactiveActivities(deps: ServiceDeps) {
  return withTypedFailures({
    /** The reminder's row, created or moved on to this occurrence (src/proactive/reminder-rows.ts). */
    async recordReminder(
      input: ReminderWorkflowInput & { at: string; version?: number },
    ): Promise<{ created: boolean; closedBefore?: ReminderState; version: number }> {
      return recordReminder(deps, { ...input, at: new Date(input.at) });
    },

    /** Mirrors the workflow's state; a write older than the row's version changes and announces nothing. */
    async saveReminderState(input: { userId: string; state: ReminderState; at: string }): Promise<{ applied: boolean }> {
      return saveReminderState(deps, { ...input, at: new Date(input.at) });
    },

    /** Records "fired" and stores + announces the notification, once per firing. */
    async fireReminder(input: { userId: string; text: string; timeZone: string; assumedTime: boolean; state: ReminderState; at: string }): Promise<{ notificationId: string }> {
      return fireReminder(deps, { ...input, at: new Date(input.at) });
    },

    async gatherDigest(input: { userId: string; at: string }): Promise<{ sections: DigestSections }> {
      return { sections: await gatherDigest(deps, input.userId, new Date(input.at)) };
    },

    async writeDigest(input: { sections: DigestSections }): Promise<WrittenDigest> {
      return writeDigest(input.sections, renderDigestTemplate(input.sections), deps.digestModel);
    },

    async storeDigest(input: { userId: string; sections: DigestSections; text: string; generatedBy: 'llm' | 'template'; notify: boolean; at: string }): Promise<{ notified: boolean; notificationId?: string }> {
      const run = Context.current().info.workflowExecution;
      return storeDigest(deps, { ...input, at: new Date(input.at), workflowId: run?.workflowId, runId: run?.runId });
    },

    async loadNudgeContext(input: { userId: string; at: string }): Promise<{ settings: UserSettings; sentToday: number; triggers: NudgeTrigger[] }> {
      return loadNudgeContext(deps, input.userId, new Date(input.at));
    },

    async deliverNudge(input: { userId: string; trigger: NudgeTrigger; message: NudgeMessage; at: string }): Promise<{ delivered: boolean; reason?: string; notificationId?: string }> {
      return deliverNudge(deps, { ...input, at: new Date(input.at) });
    },

    /** The open goals and pain points among recalled memory ids (the user's own only), past the cool-down. */
    async loadRecallNudgeContext(input: { userId: string; memoryIds: string[]; at: string }): Promise<RecallNudgeContext> {
      return loadRecallNudgeContext(deps, { ...input, at: new Date(input.at) });
    },

    /** A recall's nudge: the ordinary delivery, with the cool-down checked again inside its transaction. */
    async deliverRecallNudge(input: { userId: string; trigger: NudgeTrigger; message: NudgeMessage; at: string }): Promise<{ delivered: boolean; reason?: string; notificationId?: string }> {
      return deliverNudge(deps, { ...input, at: new Date(input.at), cooldownHours: RECALL_NUDGE_COOLDOWN_HOURS });
    },
  });
}
