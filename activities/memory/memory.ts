import { Context } from '@temporalio/activity';
import type { AppliedDecision } from '../../src/core/dto';
import type { MemoryPorts, ServiceDeps, SharedPorts } from '../../src/shared/deps';
import { applyStoreRequest } from '../../src/memory/memory-writer';
import { inferStoreRequest } from '../../src/memory/memory-inference';
import { applyRecallReinforcement } from '../../src/memory/reinforcement';
import type { StoreMemoryInput } from '../../src/memory/contract';
import { auditOf } from '../shared/audit';
import { withTypedFailures } from '../shared/failures';

/**
 * The memory workflows' activities (StoreMemory, RecallReinforcement), in a factory of their own
 * so those workflows type exactly what they call. The names are the ones recorded histories replay.
 * Memory's slice, and the settings (the user's zone) and extractor a store request's inference reads.
 */
export function createMemoryActivities(deps: MemoryPorts & SharedPorts & Pick<ServiceDeps, 'config' | 'settings' | 'extractor'>) {
  return withTypedFailures({
    async storeMemory(input: StoreMemoryInput): Promise<AppliedDecision> {
      return applyStoreRequest(deps, { store: await inferStoreRequest(deps, input), audit: { ...auditOf(), actor: input.via ?? 'api' } });
    },

    async applyRecallReinforcement(input: { userId: string; recalls: { memoryIds: string[]; at: string }[]; batchKey: string }): Promise<{ reinforced: number; skipped: number }> {
      const info = Context.current().info;
      return applyRecallReinforcement(deps, { ...input, workflowId: info.workflowExecution?.workflowId, runId: info.workflowExecution?.runId });
    },
  });
}
