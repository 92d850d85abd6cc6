import type { MemoryCandidate } from './types';

/**
 * JSON-safe shapes for values that cross Temporal (payloads are JSON: a Date would arrive as a
 * string, so we make that explicit instead of letting it happen silently).
 */
export type CandidateDTO = Omit<MemoryCandidate, 'saidAt' | 'expiresAt'> & { saidAt: string; expiresAt?: string };

export function candidateToDTO(c: MemoryCandidate): CandidateDTO {
  const { saidAt, expiresAt, ...rest } = c;
  return { ...rest, saidAt: saidAt.toISOString(), ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}) };
}

export function candidateFromDTO(d: CandidateDTO): MemoryCandidate {
  const { saidAt, expiresAt, ...rest } = d;
  return { ...rest, saidAt: new Date(saidAt), ...(expiresAt ? { expiresAt: new Date(expiresAt) } : {}) };
}

/** Outcome of one decision, as returned to workflows and the API. */
export interface AppliedDecision {
  action: 'ignore' | 'create' | 'reinforce' | 'update' | 'supersede' | 'forget';
  reason: string;
  /** The memory created, reinforced or updated (for supersede: the new one). */
  memoryId?: string;
  /** Memories moved out of active by this decision (superseded or expired). */
  affectedIds: string[];
  text: string;
  type: string;
  messageIds: string[];
  /** True when this decision had been taken before (a retry or a re-run) and was not applied again. */
  replayed: boolean;
}
