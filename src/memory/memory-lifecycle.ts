import { ErrorCode, MemoryServiceError } from '../core/errors';
import { importanceFor } from '../core/lifecycle/memory-importance';
import { restoreRefusal, type RestoreRefusal } from '../core/lifecycle/sweep';
import type { MemoryTransaction } from '../core/ports/transaction';
import { tokenizeForIndex } from '../shared/segmentation';
import type { Memory } from '../core/types';
import type { ServiceDeps } from '../shared/deps';
import type { AuditContext } from './audit-context';
import { syncVectors } from './vector-sync';

type Deps = Pick<ServiceDeps, 'unitOfWork' | 'vectorOutbox' | 'vectors' | 'embedder'>;

const REFUSAL_MESSAGES: Record<RestoreRefusal, string> = {
  already_active: 'memory is already active',
  not_archived: 'only archived memories can be restored (expired and superseded ones were retired on purpose)',
  past_expiry: 'memory is archived but its lifetime has ended; it will be expired',
};

function snapshot(m: Memory): Record<string, unknown> {
  return { status: m.status, importance: m.importance, importanceLevel: m.importanceLevel, decayScore: m.decayScore, lastAccessedAt: m.lastAccessedAt, expiresAt: m.expiresAt };
}

/**
 * Brings an archived memory back inside an open user transaction: importance recomputed (the
 * restore is an access, so recency is full; never lower than before), decay reset, postings
 * re-indexed and a vector upsert enqueued by `setStatus`, one `restore` event. The caller syncs
 * the vector after commit. Shared by the API and by extraction re-stating an archived fact.
 */
export async function restoreInTransaction(
  tx: Pick<MemoryTransaction, 'memories' | 'events'>,
  memory: Memory,
  input: { now: Date; audit: AuditContext; reason: string; messageIds?: string[] },
): Promise<Memory> {
  const imp = importanceFor({ text: memory.text, frequencyCount: memory.frequencyCount, lastAccessedAt: input.now, now: input.now, associatedTopics: memory.associatedTopics, prior: memory.importance });
  await tx.memories.setImportance({ userId: memory.userId, id: memory.id, importance: imp.score, importanceLevel: imp.level, components: imp.components });
  const tokens = tokenizeForIndex(`${memory.text} ${memory.keywords.join(' ')}`);
  const after = (await tx.memories.setStatus({ userId: memory.userId, id: memory.id, status: 'active', at: input.now, tokens }))!;
  await tx.events.append({
    event: { userId: memory.userId, memoryId: memory.id, action: 'restore', reason: input.reason, before: snapshot(memory), after: snapshot(after), workflowId: input.audit.workflowId, runId: input.audit.runId, conversationId: input.audit.conversationId, messageIds: input.messageIds, actor: input.audit.actor },
    at: input.now,
  });
  return after;
}

/**
 * Restores an archived memory (POST …/memories/{id}/restore). Unknown id → not_found; any other
 * status → invalid_state with the reason. The vector is re-embedded and upserted after commit; if
 * that fails the outbox keeps it for the next sync and `vectorSynced` is false.
 */
export async function restoreMemory(deps: Deps, input: { userId: string; id: string; now: Date; audit: AuditContext; reason?: string }): Promise<{ memory: Memory; vectorSynced: boolean }> {
  const memory = await deps.unitOfWork.forUser({
    userId: input.userId,
    work: async (tx) => {
      const current = await tx.memories.lock({ userId: input.userId, id: input.id });
      if (!current) throw new MemoryServiceError(ErrorCode.notFound, 'memory not found', { id: input.id });
      const refusal = restoreRefusal(current, input.now);
      if (refusal) throw new MemoryServiceError(ErrorCode.invalidState, REFUSAL_MESSAGES[refusal], { id: input.id, status: current.status, reason: refusal });
      return restoreInTransaction(tx, current, { now: input.now, audit: input.audit, reason: input.reason ?? 'restored on request' });
    },
  });
  const synced = await syncVectors(deps, { userId: input.userId, memoryIds: [input.id] });
  return { memory, vectorSynced: synced.failed === 0 };
}

/**
 * Forgets a memory on request (DELETE …/memories/{id}): status `expired`, postings removed,
 * vector deleted, one `expire` event. Idempotent: an already expired memory is returned
 * unchanged with `changed: false` and no new event. Unknown id → not_found.
 */
export async function forgetMemory(deps: Deps, input: { userId: string; id: string; now: Date; audit: AuditContext; reason?: string }): Promise<{ memory: Memory; changed: boolean; vectorRemoved: boolean }> {
  const outcome = await deps.unitOfWork.forUser({
    userId: input.userId,
    work: async (tx) => {
      const current = await tx.memories.lock({ userId: input.userId, id: input.id });
      if (!current) throw new MemoryServiceError(ErrorCode.notFound, 'memory not found', { id: input.id });
      if (current.status === 'expired') return { memory: current, changed: false };
      const after = (await tx.memories.setStatus({ userId: input.userId, id: input.id, status: 'expired', at: input.now }))!;
      await tx.events.append({
        event: { userId: input.userId, memoryId: input.id, action: 'expire', reason: input.reason ?? 'forgotten on request', before: snapshot(current), after: snapshot(after), workflowId: input.audit.workflowId, runId: input.audit.runId, actor: input.audit.actor },
        at: input.now,
      });
      return { memory: after, changed: true };
    },
  });
  if (!outcome.changed) return { ...outcome, vectorRemoved: true };
  const synced = await syncVectors(deps, { userId: input.userId, memoryIds: [input.id] });
  return { ...outcome, vectorRemoved: synced.failed === 0 };
}
