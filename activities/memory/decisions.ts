import { Context } from '@temporalio/activity';
import { ErrorCode, MemoryServiceError } from '../../src/core/errors';
import type { ServiceDeps } from '../../src/shared/deps';
import { confirmMemory } from '../../src/memory/memory-confirm';
import type { MemoryEraser } from '../../src/core/ports/memory';
import { forgetMemory, restoreMemory } from '../../src/memory/memory-lifecycle';
import type { MemoryDecisionInput, MemoryDecisionOutcome } from '../../src/memory/contract';
import { withTypedFailures } from '../shared/failures';

/**
 * The activity of the MemoryDecision workflow (workflows/memory/decisions.ts): the service call the API
 * made directly before, now with the workflow in the audit event. A retry after an attempt that
 * committed but did not report back (a worker crash, a timeout) finds its own audit event and
 * answers as the first attempt would have, instead of "already active" or "not found".
 *
 * An erase is the privacy capability's work, above memory: it comes in as the `eraser` port, built
 * by the worker (src/runtime.ts) over the same deps as these activities, so it signals the persona
 * rebuild like every other memory write of the worker.
 */
export function createDecisionActivities(deps: ServiceDeps, ports: { eraser: MemoryEraser }) {
  return withTypedFailures({
    async applyMemoryDecision(input: MemoryDecisionInput): Promise<MemoryDecisionOutcome> {
      const info = Context.current().info;
      const audit = { actor: input.actor, workflowId: info.workflowExecution?.workflowId, runId: info.workflowExecution?.runId };
      const now = new Date(input.requestedAt);
      const { userKey, memoryId } = input;
      const retried = info.attempt > 1;
      const ownEvent = async (action: string, since?: Date) =>
        (await deps.memoryEvents.history({ userId: userKey, memoryId })).find((e) => e.action === action && (since ? e.createdAt >= since : e.workflowId === audit.workflowId));

      switch (input.action) {
        case 'forget': {
          const result = await forgetMemory(deps, { userId: userKey, id: memoryId, now, audit });
          const changed = result.changed || (retried && (await ownEvent('expire')) !== undefined);
          return { action: 'forget', memoryId, changed, vectorRemoved: result.vectorRemoved };
        }
        case 'restore': {
          try {
            const result = await restoreMemory(deps, { userId: userKey, id: memoryId, now, audit });
            return { action: 'restore', memoryId, vectorSynced: result.vectorSynced };
          } catch (err) {
            if (!(retried && err instanceof MemoryServiceError && err.code === ErrorCode.invalidState && (await ownEvent('restore')))) throw err;
            return { action: 'restore', memoryId, vectorSynced: false };
          }
        }
        case 'confirm': {
          const result = await confirmMemory(deps, { userId: userKey, id: memoryId, now, audit });
          const changed = result.changed || (retried && (await ownEvent('confirm')) !== undefined);
          return { action: 'confirm', memoryId, changed };
        }
        case 'erase': {
          try {
            const erased = await ports.eraser.eraseMemory({ userKey, id: memoryId, now, actor: input.actor });
            return { action: 'erase', memoryId, removed: { ...erased.removed }, vectorRemoved: erased.vectorRemoved, conversations: erased.conversations, episodesRebuilt: erased.episodesRebuilt };
          } catch (err) {
            const event = retried && err instanceof MemoryServiceError && err.code === ErrorCode.notFound ? await ownEvent('erase', now) : undefined;
            if (!event) throw err;
            // Erased by the earlier attempt: the counts are in its event; the vector delete stays queued for the sweep if Chroma missed it.
            const removed = (event.after as { removed?: Record<string, number> } | undefined)?.removed ?? {};
            return { action: 'erase', memoryId, removed, vectorRemoved: false, conversations: [], episodesRebuilt: false };
          }
        }
      }
    },
  });
}
