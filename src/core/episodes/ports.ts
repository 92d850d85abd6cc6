import type { VectorHit } from '../vector-hit';

/** A stored episode (one conversation, one local day). */
export interface Episode {
  id: string;
  userId: string;
  conversationId: string;
  day: string;
  timeZone: string;
  startedAt: Date;
  endedAt: Date;
  summary: string;
  messageIds: string[];
  summaryMessageIds: string[];
}

/** Outcome of replacing a conversation's episodes. */
export interface EpisodeWrite {
  /** Episodes created or whose content changed. */
  written: string[];
  /** Episodes rewritten with identical content (a retry or re-run): nothing changed. */
  unchanged: string[];
  /** Episodes of the conversation that no longer exist (e.g. the user's zone moved a day). */
  removed: string[];
}

/** An episode whose vector in the episode index is missing or stale. */
export interface EpisodeVectorOwed {
  id: string;
  conversationId: string;
  day: string;
  summary: string;
  contentHash: string;
}

/** What the episode vector index stores per episode (besides the vector and the user). */
export interface EpisodeVectorItem {
  id: string;
  embedding: number[];
  conversationId: string;
  /** Local day, YYYY-MM-DD. */
  day: string;
}

/**
 * Vector index of episode summaries, in its own collection so memory search never sees them.
 * Every call takes the user: nothing can be searched, written or removed across users.
 */
export interface EpisodeVectorIndex {
  upsert(input: { userId: string; items: EpisodeVectorItem[] }): Promise<void>;
  query(input: { userId: string; embedding: number[]; k: number }): Promise<VectorHit[]>;
  remove(input: { userId: string; ids: string[] }): Promise<void>;
  /** Deletes all of the user's episode vectors (a purge); false when there were none. Idempotent. */
  dropUser(userId: string): Promise<boolean>;
  /** Moves a user's vectors to a new user key (the upgrade to (tenant, user) keys). */
  moveUser(input: { from: string; to: string }): Promise<number>;
}
