import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { createMemoryActivities } from '../../activities/memory/memory';
import type { AppliedDecision } from '../../src/core/dto';
import { MemoryDecisionsKey } from '../shared/search-attributes';
import type { StoreMemoryInput } from '../shared/types';

type Activities = ReturnType<typeof createMemoryActivities>;

const { storeMemory } = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 10 },
});

/** A memory written through the API: one audited decision, PostgreSQL row + Chroma vector. */
export async function storeMemoryWorkflow(input: StoreMemoryInput): Promise<AppliedDecision> {
  const decision = await storeMemory(input);
  upsertSearchAttributes([{ key: MemoryDecisionsKey, value: [decision.action] }]);
  return decision;
}
