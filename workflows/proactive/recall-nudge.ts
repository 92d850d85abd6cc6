import { ActivityFailure, condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { createProactiveActivities } from '../../activities/proactive/proactive';
import { decideNudgeFrom } from '../../src/core/proactive/nudge-policy';
import { composeNudge } from '../../src/core/proactive/nudge-wording';
import { RECALL_NUDGE_MAX_IDS } from '../../src/core/proactive/recall-nudge';
import { recallHitsSignal, recallNudgeStateQuery, type RecallHitsInput, type RecallNudgeOutcome, type RecallNudgeWorkflowInput } from '../../src/proactive/contract';

type Activities = ReturnType<typeof createProactiveActivities>;

const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 5 },
});

const MAX_SIGNALS_PER_RUN = 500;
const RECENT_OUTCOMES = 20;
const DEFAULT_FLUSH_SECONDS = 5;

/**
 * RecallNudgeWorkflow, one per user (`recall-nudge:{userKey}`), fed by every recall through a
 * fire-and-forget signal: a few seconds' recalls are gathered → the open goals and pain points
 * among them that the user has not heard about within the cool-down are loaded → the ordinary
 * nudge decision (opt-out, quiet hours, daily cap, the user's probability drawn with the seeded
 * `Math.random()`) → delivery, which checks settings and the cool-down again in its transaction.
 * The state query shows the latest outcomes, so Temporal UI tells why a recall led to nothing.
 */
export async function recallNudgeWorkflow(input: RecallNudgeWorkflowInput): Promise<void> {
  const pending: RecallHitsInput[] = [...(input.pending ?? [])];
  const recent: RecallNudgeOutcome[] = [...(input.recent ?? [])];
  let batches = input.batches ?? 0;
  let received = 0;
  setHandler(recallHitsSignal, (s) => {
    pending.push(s);
    received++;
  });
  setHandler(recallNudgeStateQuery, () => ({ batches, pending: pending.length, recent: [...recent] }));

  for (;;) {
    await condition(() => pending.length > 0);
    await condition(() => received >= MAX_SIGNALS_PER_RUN, `${input.flushSeconds ?? DEFAULT_FLUSH_SECONDS}s`);
    const batch = pending.splice(0, pending.length);
    const memoryIds = [...new Set(batch.flatMap((b) => b.memoryIds))].slice(0, RECALL_NUDGE_MAX_IDS);
    const now = new Date();
    let outcome: RecallNudgeOutcome;
    try {
      outcome = await decideAndDeliver(input.userId, memoryIds, now, batches + 1);
    } catch (err) {
      // The user was purged (unknown now) or the store stayed down through the retries: a nudge
      // is optional, so the workflow ends instead of failing; the next recall starts it afresh.
      if (err instanceof ActivityFailure) return;
      throw err;
    }
    recent.push(outcome);
    if (recent.length > RECENT_OUTCOMES) recent.splice(0, recent.length - RECENT_OUTCOMES);
    // Counted once its outcome is recorded, so `batches` in the state query means "decided".
    batches++;
    if (received >= MAX_SIGNALS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof recallNudgeWorkflow>({ ...input, pending: pending.splice(0, pending.length), batches, recent });
    }
    if (pending.length === 0) {
      // An idle user does not keep a workflow open: wait a while for more recalls, then finish.
      const more = await condition(() => pending.length > 0, '10m');
      if (!more) return;
    }
  }
}

/** One batch: what could be said, the user's settings' decision, and the delivery that re-checks them. */
async function decideAndDeliver(userId: string, memoryIds: string[], now: Date, batch: number): Promise<RecallNudgeOutcome> {
  const context = await acts.loadRecallNudgeContext({ userId, memoryIds, at: now.toISOString() });
  const decision = decideNudgeFrom(context, now, Math.random());
  const outcome: RecallNudgeOutcome = { batch, decision, delivered: false, coolingDown: context.coolingDown };
  if (!decision.send) return outcome;
  const message = composeNudge(decision.trigger, Math.random());
  const delivery = await acts.deliverRecallNudge({ userId, trigger: decision.trigger, message, at: now.toISOString() });
  return { ...outcome, delivered: delivery.delivered, ...(delivery.reason ? { reason: delivery.reason } : {}), ...(delivery.notificationId ? { notificationId: delivery.notificationId } : {}) };
}
