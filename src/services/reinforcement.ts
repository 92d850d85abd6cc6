import { eventStore } from '../adapters/postgres/event-repository';
import { memoryStore } from '../adapters/postgres/memory-repository';
import { inUserTransaction } from '../adapters/postgres/pool';
import type { ServiceDeps } from './deps';
import { importanceFor } from './memory-writer';

/**
 * Applies a batch of recalls: each recalled memory gets frequency +1, last_recalled_at and a fresh
 * importance, with an audit event. Keyed per batch and memory, so a retried batch applies once.
 */
export async function applyRecallReinforcement(
  deps: Pick<ServiceDeps, 'pool'>,
  input: { userId: string; recalls: { memoryIds: string[]; at: string }[]; batchKey: string; workflowId?: string; runId?: string },
): Promise<{ reinforced: number; skipped: number }> {
  const latest = new Map<string, Date>();
  for (const r of input.recalls) for (const id of r.memoryIds) {
    const at = new Date(r.at);
    const prev = latest.get(id);
    if (!prev || at > prev) latest.set(id, at);
  }
  const counts = new Map<string, number>();
  for (const r of input.recalls) for (const id of new Set(r.memoryIds)) counts.set(id, (counts.get(id) ?? 0) + 1);

  return inUserTransaction(deps.pool, input.userId, async (client) => {
    let reinforced = 0;
    let skipped = 0;
    for (const [id, at] of latest) {
      const key = `recall:${input.batchKey}:${id}`;
      if (await eventStore.findByKey(client, input.userId, key)) {
        skipped++;
        continue;
      }
      const before = await memoryStore.get(client, input.userId, id);
      if (!before || before.status !== 'active') {
        skipped++;
        continue;
      }
      let after = before;
      for (let i = 0; i < (counts.get(id) ?? 1); i++) {
        // Recall never lowers importance: the current value is the floor (prior) of the new one.
        const imp = importanceFor({ text: after.text, frequencyCount: after.frequencyCount + 1, lastAccessedAt: at, now: at, associatedTopics: after.associatedTopics, prior: after.importance });
        after = (await memoryStore.reinforce(client, input.userId, id, { at, importance: imp.score, importanceLevel: imp.level, components: imp.components, recalled: true }))!;
      }
      await eventStore.insert(
        client,
        {
          userId: input.userId,
          memoryId: id,
          action: 'recall_reinforce',
          reason: `recalled ${counts.get(id) ?? 1}× into a chat context`,
          before: { frequencyCount: before.frequencyCount, importance: before.importance, lastRecalledAt: before.lastRecalledAt },
          after: { frequencyCount: after.frequencyCount, importance: after.importance, lastRecalledAt: after.lastRecalledAt },
          workflowId: input.workflowId,
          runId: input.runId,
          actor: 'recall',
          idempotencyKey: key,
        },
        at,
      );
      reinforced++;
    }
    return { reinforced, skipped };
  });
}
