import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { createMemoryActivities } from '../../activities/memory/memory';
import { memoriesRecalledSignal, reinforcementWorkflowId, type MemoriesRecalledInput, type RecallReinforcementInput } from '../../src/memory/contract';

type Activities = ReturnType<typeof createMemoryActivities>;
const { applyRecallReinforcement } = proxyActivities<Activities>({
  startToCloseTimeout: '1m',
  // No attempt limit: a reinforcement batch must eventually land, and it is idempotent per batch.
  retry: { initialInterval: '1s', maximumInterval: '1m' },
});

export { memoriesRecalledSignal, reinforcementWorkflowId };
export type { MemoriesRecalledInput, RecallReinforcementInput };

const MAX_SIGNALS_PER_RUN = 500;

/**
 * One per user, fed by the recall API: recalled memories get frequency +1 and last_recalled_at in
 * batches, off the hot path and durably. Continues as new before its history grows large.
 */
export async function recallReinforcementWorkflow(input: RecallReinforcementInput): Promise<void> {
  const pending: MemoriesRecalledInput[] = [...(input.pending ?? [])];
  let received = 0;
  let batches = input.batchesApplied ?? 0;
  setHandler(memoriesRecalledSignal, (s) => {
    pending.push(s);
    received++;
  });

  for (;;) {
    await condition(() => pending.length > 0);
    // Gather a window's worth of recalls, then apply them as one batch.
    await condition(() => received >= MAX_SIGNALS_PER_RUN, `${input.flushSeconds}s`);
    const batch = pending.splice(0, pending.length);
    batches++;
    await applyRecallReinforcement({ userId: input.userId, recalls: batch, batchKey: `${workflowInfo().runId}:${batches}` });
    if (received >= MAX_SIGNALS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof recallReinforcementWorkflow>({ ...input, pending: pending.splice(0, pending.length), batchesApplied: batches });
    }
    if (pending.length === 0) {
      // Idle users should not keep a workflow open forever: wait a while, then finish.
      const more = await condition(() => pending.length > 0, '1h');
      if (!more) return;
    }
  }
}
