/**
 * The memory API's reads and its store: one service function per route of
 * src/api/routes/memories.ts, so the routes hold no repository and no SQL.
 */
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { storeMemoryWorkflow } from '../../workflows';
import { userSearchAttributes } from '../../workflows/search-attributes';
import type { StoreMemoryInput } from '../../workflows/types';
import type { AppliedDecision } from '../core/dto';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { StoredMemoryEvent } from '../core/ports';
import type { Memory, MemoryStatus, MemoryType } from '../core/types';
import type { ServiceDeps } from './deps';

/** One memory of the user; not_found when there is none. */
export async function getMemory(deps: Pick<ServiceDeps, 'memories'>, input: { userId: string; id: string }): Promise<Memory> {
  const memory = await deps.memories.get(input);
  if (!memory) throw new MemoryServiceError(ErrorCode.notFound, 'memory not found', { id: input.id });
  return memory;
}

/** The user's memories, newest first, filtered by status and type, paged. */
export function listMemories(
  deps: Pick<ServiceDeps, 'memories'>,
  input: { userId: string; status?: MemoryStatus; type?: MemoryType; limit: number; offset: number },
): Promise<{ memories: Memory[]; total: number }> {
  return deps.memories.list(input);
}

/** Every decision taken about one memory, oldest first; not_found for an unknown memory. */
export async function memoryHistory(deps: Pick<ServiceDeps, 'memories' | 'memoryEvents'>, input: { userId: string; id: string }): Promise<StoredMemoryEvent[]> {
  await getMemory(deps, input);
  return deps.memoryEvents.history({ userId: input.userId, memoryId: input.id });
}

/**
 * Stores a memory through the StoreMemory workflow (PostgreSQL row, then the vector), waiting for
 * its decision, and returns the memory as stored. The workflow id makes a retried request with the
 * same id join the first run. Temporal down → workflowUnavailable; the workflow failing → internal.
 */
export async function storeMemory(
  deps: Pick<ServiceDeps, 'memories'> & { temporal: Client; taskQueue: string },
  input: { workflowId: string; store: StoreMemoryInput },
): Promise<{ memory: Memory; decision: AppliedDecision }> {
  const { workflowId, store } = input;
  let decision: AppliedDecision;
  try {
    decision = await deps.temporal.workflow.execute(storeMemoryWorkflow, {
      taskQueue: deps.taskQueue,
      workflowId,
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [store],
      typedSearchAttributes: userSearchAttributes(store.userId),
      staticSummary: `Store a ${store.type} memory for ${store.userId}`,
    });
  } catch (err) {
    if (err instanceof WorkflowFailedError) throw new MemoryServiceError(ErrorCode.internal, 'storing the memory failed', { workflowId }, { cause: err });
    throw new MemoryServiceError(ErrorCode.workflowUnavailable, 'Temporal unavailable', { workflowId }, { cause: err });
  }
  const memory = decision.memoryId ? await deps.memories.get({ userId: store.userId, id: decision.memoryId }) : undefined;
  if (!memory) throw new MemoryServiceError(ErrorCode.internal, 'memory missing after store', { workflowId });
  return { memory, decision };
}
