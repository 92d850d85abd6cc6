/**
 * Retention, so raw conversations and what is derived from them are not kept for ever: the kinds
 * of rows the daily sweep deletes once they are older than the
 * configured age, and what it counts. Pure, shared by the sweep workflow and its activity.
 */

/** In the order the sweep handles them: messages before episodes, so a conversation whose last
 * message and episode both expire is removed in the episodes step. */
export const RETENTION_KINDS = ['messages', 'episodes', 'notifications', 'digests'] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

export interface RetentionCounts {
  messages: number;
  /** Postings of the deleted messages (the BM25 statistics follow through a trigger). */
  messagePostings: number;
  episodes: number;
  episodeVectorsRemoved: number;
  /** Exchange vectors (line and pair) of the deleted messages, taken out of Chroma with them. */
  exchangeVectorsRemoved: number;
  notifications: number;
  digests: number;
  /** Conversations left with neither messages nor episodes. */
  conversations: number;
}

export function emptyRetentionCounts(): RetentionCounts {
  return { messages: 0, messagePostings: 0, episodes: 0, episodeVectorsRemoved: 0, exchangeVectorsRemoved: 0, notifications: 0, digests: 0, conversations: 0 };
}

export function addRetentionCounts(a: RetentionCounts, b: Partial<RetentionCounts>): RetentionCounts {
  const out = { ...a };
  for (const k of Object.keys(out) as (keyof RetentionCounts)[]) out[k] += b[k] ?? 0;
  return out;
}

/** Result of a retention step: `cursor` resumes it (kind and keyset position), `done` when every kind is through. */
export interface RetentionStepResult {
  cursor: string | null;
  done: boolean;
  counts: RetentionCounts;
}

/** The instant before which a row of a kind kept `days` days is deleted; null = kept forever. */
export function retentionCutoff(now: Date, days: number | null): Date | null {
  return days === null ? null : new Date(now.getTime() - days * 86_400_000);
}
