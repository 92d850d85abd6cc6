import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { Memory } from '../core/types';
import type { ServiceDeps } from '../shared/deps';
import type { AuditContext } from './memory-writer';

/**
 * The user confirms a memory an agent or an app wrote (a pending instruction): from the next recall
 * on it is one of the user's standing instructions. One `confirm` event records who confirmed it.
 * Idempotent: a memory that is not pending (confirmed before, or never pending) comes back with
 * `changed: false`. Only an active memory can be confirmed: a forgotten one stays forgotten.
 */
export async function confirmMemory(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  input: { userId: string; id: string; now: Date; audit: AuditContext },
): Promise<{ memory: Memory; changed: boolean }> {
  return deps.unitOfWork.forUser({
    userId: input.userId,
    work: async (tx) => {
      const current = await tx.memories.lock({ userId: input.userId, id: input.id });
      if (!current) throw new MemoryServiceError(ErrorCode.notFound, 'memory not found', { id: input.id });
      if (!current.pending) return { memory: current, changed: false };
      if (current.status !== 'active') throw new MemoryServiceError(ErrorCode.invalidState, `only an active memory can be confirmed; this one is ${current.status}`, { id: input.id, status: current.status });
      const after = (await tx.memories.confirm({ userId: input.userId, id: input.id, at: input.now }))!;
      await tx.events.append({
        event: {
          userId: input.userId,
          memoryId: input.id,
          action: 'confirm',
          reason: `confirmed by the user: written via ${current.via}, injected as the user's own from now on`,
          before: { pending: true, via: current.via },
          after: { pending: false, via: current.via },
          workflowId: input.audit.workflowId,
          runId: input.audit.runId,
          actor: input.audit.actor,
          via: current.via,
        },
        at: input.now,
      });
      return { memory: after, changed: true };
    },
  });
}
