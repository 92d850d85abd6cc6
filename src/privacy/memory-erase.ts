import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { MemoryEraser, MemoryEraseResult } from '../core/ports/memory';
import type { ServiceDeps } from '../shared/deps';
import { writeEpisodes, type EpisodeWriterDeps } from '../conversation/episodes';
import { eraseExchangeVectors } from '../conversation/exchange-index';

/** The erase's result; the shape is the memory capability's port's, which this file implements. */
export type EraseResult = MemoryEraseResult;

/** An erase writes in one transaction and removes the vector, then rebuilds the episodes of the conversations that lost messages. */
export type EraseDeps = Pick<ServiceDeps, 'unitOfWork' | 'vectors'> & EpisodeWriterDeps;

/**
 * Erases one memory for good (DELETE …/memories/{id}?hard=true), unlike forgetting (status
 * expired, history kept). PostgreSQL first, in one transaction under the user's write lock (see
 * MemoryErasure.eraseMemory for what goes); then the vector; then the episodes of the conversations
 * that lost messages are rebuilt from what is left, which re-summarises or removes them and
 * their vectors. Unknown id → not_found (an erased memory is unknown afterwards).
 */
export async function eraseMemory(
  deps: EraseDeps,
  input: { userKey: string; id: string; now: Date; actor: string },
): Promise<EraseResult> {
  const erased = await deps.unitOfWork.forUser({
    userId: input.userKey,
    work: (tx) => tx.erasure.eraseMemory({ userKey: input.userKey, id: input.id, at: input.now, actor: input.actor }),
  });
  if (!erased) throw new MemoryServiceError(ErrorCode.notFound, 'memory not found', { id: input.id });

  let vectorRemoved = true;
  try {
    await deps.vectors.remove({ userId: input.userKey, ids: [input.id] });
    await deps.unitOfWork.run({ work: (tx) => tx.erasure.vectorErased({ userKey: input.userKey, id: input.id }) });
  } catch {
    // The outbox row stays: the daily sweep's vector phase deletes it when Chroma is back.
    vectorRemoved = false;
  }

  try {
    await eraseExchangeVectors(deps, input.userKey, erased.messages);
  } catch {
    // Search hydrates from PostgreSQL, where the lines are gone; the next re-index of the
    // conversation (its watermark was reset) rewrites the pairs, and a purge drops the rest.
  }

  let episodesRebuilt = true;
  for (const conversationId of erased.conversations) {
    try {
      await writeEpisodes(deps, { userId: input.userKey, conversationId });
    } catch {
      // The messages are gone already; the next extraction of this conversation rebuilds them too.
      episodesRebuilt = false;
    }
  }
  return { id: input.id, erased: true, removed: erased.counts, vectorRemoved, conversations: erased.conversations, episodesRebuilt };
}

/** The memory capability's {@link MemoryEraser} (the MemoryDecision's erase), over the deps the worker's activities run with. */
export function privacyMemoryEraser(deps: EraseDeps): MemoryEraser {
  return { eraseMemory: (input) => eraseMemory(deps, input) };
}
