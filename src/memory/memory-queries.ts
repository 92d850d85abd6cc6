/**
 * The memory API's reads: one service function per route of src/api/routes/memories.ts, so the
 * routes hold no repository and no SQL (the store is src/memory/memory-store.ts).
 */
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { StoredMemoryEvent } from '../core/ports/memory';
import type { Memory, MemoryStatus, MemoryType } from '../core/types';
import type { ServiceDeps } from '../shared/deps';

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

