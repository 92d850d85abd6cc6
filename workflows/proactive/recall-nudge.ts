import { ActivityFailure, condition, continueAsNew, patched, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { createProactiveActivities } from '../../activities/proactive/proactive';
import { decideNudgeFrom, deferUntilQuietEnds } from '../../src/core/proactive/nudge-policy';
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
 * Histories recorded before a nudge refused only by quiet hours waited for the window's end
 * (test/fixtures/histories/recallNudgeWorkflow-quiet-hours.binpb) replay the drop they recorded.
 */
export const QUIET_HOURS_DEFER_PATCH = 'recall-nudge-defer-quiet-hours';

/**
 * RecallNudgeWorkflow, one per user (`recall-nudge:{userKey}`), fed by every recall through a
 * fire-and-forget signal: a few seconds' recalls are gathered → the open goals and pain points
 * among them that the user has not heard about within the cool-down are loaded → the ordinary
 * nudge decision (opt-out, quiet hours, daily cap, the user's probability drawn with the seeded
 * `Math.random()`) → delivery, which checks settings and the cool-down again in its transaction.
 * A nudge refused by quiet hours alone is not dropped: a durable timer waits for the window's end
 * in the user's zone, and the whole decision is taken once more then (settings, cap, the memory
 * still open and not nudged since, the same draw); refused again, it is dropped.
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
    const record = (outcome: RecallNudgeOutcome): void => {
      recent.push(outcome);
      if (recent.length > RECENT_OUTCOMES) recent.splice(0, recent.length - RECENT_OUTCOMES);
    };
    try {
      const draw = Math.random();
      const first = await decideAndDeliver(input.userId, memoryIds, now, batches + 1, draw);
      if (first.deferredUntil === undefined || !patched(QUIET_HOURS_DEFER_PATCH)) {
        record(withoutDeferral(first));
      } else {
        record(first);
        // Signals arriving meanwhile wait in `pending` for the next batch.
        await sleep(Math.max(0, new Date(first.deferredUntil).getTime() - now.getTime()));
        record(withoutDeferral(await decideAndDeliver(input.userId, memoryIds, new Date(), batches + 1, draw)));
      }
    } catch (err) {
      // The user was purged (unknown now) or the store stayed down through the retries: a nudge
      // is optional, so the workflow ends instead of failing; the next recall starts it afresh.
      if (err instanceof ActivityFailure) return;
      throw err;
    }
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

/** An outcome that will not be decided again (the old path, or the second decision itself). */
function withoutDeferral({ deferredUntil: _, ...outcome }: RecallNudgeOutcome): RecallNudgeOutcome {
  return outcome;
}

/**
 * One batch: what could be said, the user's settings' decision, and the delivery that re-checks
 * them; `deferredUntil` when quiet hours were the only refusal.
 */
async function decideAndDeliver(userId: string, memoryIds: string[], now: Date, batch: number, draw: number): Promise<RecallNudgeOutcome> {
  const context = await acts.loadRecallNudgeContext({ userId, memoryIds, at: now.toISOString() });
  const decision = decideNudgeFrom(context, now, draw);
  const outcome: RecallNudgeOutcome = { batch, decision, delivered: false, coolingDown: context.coolingDown };
  if (!decision.send) {
    const until = deferUntilQuietEnds(context, now, draw);
    return until ? { ...outcome, deferredUntil: until.toISOString() } : outcome;
  }
  const message = composeNudge(decision.trigger, Math.random());
  const delivery = await acts.deliverRecallNudge({ userId, trigger: decision.trigger, message, at: now.toISOString() });
  return { ...outcome, delivered: delivery.delivered, ...(delivery.reason ? { reason: delivery.reason } : {}), ...(delivery.notificationId ? { notificationId: delivery.notificationId } : {}) };
}
