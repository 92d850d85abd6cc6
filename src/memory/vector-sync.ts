import type { MemoryType } from '../core/types';
import type { ServiceDeps } from '../shared/deps';

/**
 * Drains the vector outbox (all of it, one user's, or given memories): PostgreSQL is the source of
 * truth, and a vector write that failed after the row committed is repaired here on the next call
 * — after the write, by the workflow's reconcile step, or by the sweep.
 */
export async function syncVectors(
  deps: Pick<ServiceDeps, 'vectorOutbox' | 'vectors' | 'embedder'>,
  opts: { userId?: string; memoryIds?: string[]; limit?: number; known?: Record<string, number[]> } = {},
): Promise<{ upserted: number; removed: number; failed: number }> {
  const entries = await deps.vectorOutbox.pending({ limit: opts.limit ?? 500, userId: opts.userId, ids: opts.memoryIds });
  let upserted = 0;
  let removed = 0;
  let failed = 0;
  const byUser = new Map<string, typeof entries>();
  for (const e of entries) byUser.set(e.userId, [...(byUser.get(e.userId) ?? []), e]);

  for (const [userId, list] of byUser) {
    const deletes = list.filter((e) => e.op === 'delete');
    const upserts = list.filter((e) => e.op === 'upsert');
    try {
      if (deletes.length > 0) {
        await deps.vectors.remove({ userId, ids: deletes.map((e) => e.memoryId) });
        for (const e of deletes) await deps.vectorOutbox.done({ userId, memoryId: e.memoryId, enqueuedAt: e.enqueuedAt });
        removed += deletes.length;
      }
      if (upserts.length > 0) {
        const missing = upserts.filter((e) => !opts.known?.[e.memoryId]);
        // Given memories are the ones a write or a restore just touched; a whole drain is bulk work.
        const lane = opts.memoryIds ? 'interactive' : 'background';
        const computed = missing.length > 0 ? await deps.embedder.embedDocuments({ texts: missing.map((e) => e.text), lane }) : [];
        const vectors = new Map(missing.map((e, i) => [e.memoryId, computed[i]!]));
        await deps.vectors.upsert({
          userId,
          items: upserts.map((e) => ({
            id: e.memoryId,
            embedding: opts.known?.[e.memoryId] ?? vectors.get(e.memoryId)!,
            type: e.type as MemoryType,
            createdAt: e.createdAt.toISOString(),
          })),
        });
        for (const e of upserts) await deps.vectorOutbox.done({ userId, memoryId: e.memoryId, enqueuedAt: e.enqueuedAt });
        upserted += upserts.length;
      }
    } catch (err) {
      // Left in the outbox with the error recorded: the next sync retries it, nothing is lost.
      failed += list.length;
      await deps.vectorOutbox.failed({ userId, memoryIds: list.map((e) => e.memoryId), error: err instanceof Error ? err.message : String(err) });
    }
  }
  return { upserted, removed, failed };
}
