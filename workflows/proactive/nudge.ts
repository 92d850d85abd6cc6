import { proxyActivities } from '@temporalio/workflow';
import type { createProactiveActivities } from '../../activities/proactive/proactive';
import { decideNudgeFrom } from '../../src/core/proactive/nudge-policy';
import { composeNudge } from '../../src/core/proactive/nudge-wording';
import type { NudgeWorkflowInput, NudgeWorkflowResult } from './proactive-inputs';

type Activities = ReturnType<typeof createProactiveActivities>;

const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 5 },
});

/**
 * NudgeWorkflow, started by the per-user Schedule `nudge:{userId}`: load what could be said →
 * decide (opt-out, quiet hours, daily cap, then the user's probability, drawn with the workflow's
 * seeded `Math.random()` so a replay takes the same decision) → deliver. The decision is the
 * workflow's result, so Temporal UI shows why a nudge was or was not sent.
 */
export async function nudgeWorkflow(input: NudgeWorkflowInput): Promise<NudgeWorkflowResult> {
  const now = new Date();
  const context = await acts.loadNudgeContext({ userId: input.userId, at: now.toISOString() });
  const decision = decideNudgeFrom(context, now, Math.random());
  if (!decision.send) return { decision, delivered: false };
  const message = composeNudge(decision.trigger, Math.random());
  const delivery = await acts.deliverNudge({ userId: input.userId, trigger: decision.trigger, message, at: now.toISOString() });
  return { decision, delivered: delivery.delivered, ...(delivery.notificationId ? { notificationId: delivery.notificationId } : {}) };
}
