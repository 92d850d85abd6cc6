import { importanceFor } from '../core/lifecycle/memory-importance';
import type { MemoryTransaction } from '../core/ports/transaction';
import type { ServiceDeps } from '../shared/deps';

/** One memory's share of a batch: the latest recall time and how often it was recalled. */
interface RecallTally {
  at: Date;
  times: number;
}

/** Per memory: the latest time it was recalled in the batch and how many recalls named it. */
function tallyRecalls(recalls: { memoryIds: string[]; at: string }[]): Map<string, RecallTally> {
  const tally = new Map<string, RecallTally>();
  for (const r of recalls) {
    const at = new Date(r.at);
    for (const id of new Set(r.memoryIds)) {
      const prev = tally.get(id);
      tally.set(id, { at: prev && prev.at > at ? prev.at : at, times: (prev?.times ?? 0) + 1 });
    }
  }
  return tally;
}

/**
 * Applies a batch of recalls: each recalled memory gets frequency +1, last_recalled_at and a fresh
 * importance, with an audit event. Keyed per batch and memory, so a retried batch applies once.
 */
export async function applyRecallReinforcement(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  input: { userId: string; recalls: { memoryIds: string[]; at: string }[]; batchKey: string; workflowId?: string; runId?: string },
): Promise<{ reinforced: number; skipped: number }> {
  const tally = tallyRecalls(input.recalls);
  return deps.unitOfWork.forUser({
    userId: input.userId,
    work: async (tx) => {
      let reinforced = 0;
      for (const [id, recalled] of tally) if (await reinforceRecalled(tx, { ...input, id, ...recalled })) reinforced++;
      return { reinforced, skipped: tally.size - reinforced };
    },
  });
}

/** One memory of the batch; false when it was done already (the key exists) or is not active. */
async function reinforceRecalled(
  tx: Pick<MemoryTransaction, 'memories' | 'events'>,
  input: { userId: string; id: string; at: Date; times: number; batchKey: string; workflowId?: string; runId?: string },
): Promise<boolean> {
  const { userId, id, at } = input;
  const key = `recall:${input.batchKey}:${id}`;
  if (await tx.events.findByKey({ userId, key })) return false;
  const before = await tx.memories.get({ userId, id });
  if (!before || before.status !== 'active') return false;
  let after = before;
  for (let i = 0; i < input.times; i++) {
    // Recall never lowers importance: the current value is the floor (prior) of the new one.
    const imp = importanceFor({ text: after.text, frequencyCount: after.frequencyCount + 1, lastAccessedAt: at, now: at, associatedTopics: after.associatedTopics, prior: after.importance });
    after = (await tx.memories.reinforce({ userId, id, at, importance: imp.score, importanceLevel: imp.level, components: imp.components, recalled: true }))!;
  }
  await tx.events.append({
    event: {
      userId,
      memoryId: id,
      action: 'recall_reinforce',
      reason: `recalled ${input.times}× into a chat context`,
      before: { frequencyCount: before.frequencyCount, importance: before.importance, lastRecalledAt: before.lastRecalledAt },
      after: { frequencyCount: after.frequencyCount, importance: after.importance, lastRecalledAt: after.lastRecalledAt },
      workflowId: input.workflowId,
      runId: input.runId,
      actor: 'recall',
      idempotencyKey: key,
    },
    at,
  });
  return true;
}
