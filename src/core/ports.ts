import type { MemoryType } from './types';
import type { LlmProposal } from './decisions/llm-resolution';

/** A nearest neighbour from the vector index; `similarity` is cosine similarity in [-1, 1]. */
export interface VectorHit {
  id: string;
  similarity: number;
}

export interface VectorItem {
  id: string;
  embedding: number[];
  type: MemoryType;
  /** ISO time the memory was said; stored for debugging in the index, never trusted over PostgreSQL. */
  createdAt: string;
}

/**
 * Vector index of active memories. Every call takes the user: there is no way to search, write or
 * delete without a user filter.
 */
export interface VectorIndex {
  upsert(input: { userId: string; items: VectorItem[] }): Promise<void>;
  query(input: { userId: string; embedding: number[]; k: number; types?: MemoryType[] }): Promise<VectorHit[]>;
  remove(input: { userId: string; ids: string[] }): Promise<void>;
  /**
   * Deletes vectors of many users in one call (the lifecycle sweep retires thousands of memories
   * across thousands of users). Still filtered: only vectors owned by the users named are deleted.
   */
  removeMany(input: { items: { userId: string; id: string }[] }): Promise<void>;
  /** Deletes everything the index holds for the user (a purge); false when there was nothing. Idempotent. */
  dropUser(userId: string): Promise<boolean>;
  /** Moves a user's vectors to a new user key (the upgrade to (tenant, user) keys). */
  moveUser(input: { from: string; to: string }): Promise<number>;
  heartbeat(): Promise<void>;
}

/**
 * Turns a chat message and the messages before it into extra recall queries (pronouns resolved,
 * alternatives named). Optional: recall runs without one; an LLM adapter implements it.
 */
export interface QueryRewriter {
  /** Up to a few clean queries besides the original; empty when the model proposes nothing new. */
  rewrite(input: { query: string; recentMessages: readonly string[]; signal?: AbortSignal }): Promise<string[]>;
}

/**
 * A model that proposes how a candidate memory relates to its labelled neighbours (the LLM
 * conflict resolver). Transport failures throw; an unusable answer is reported as `unusable`.
 */
export interface ConflictJudge {
  /** Shown in audit reasons, e.g. "llm:gpt-4o-mini". */
  readonly name: string;
  propose(input: { system: string; prompt: string }): Promise<{ proposal: LlmProposal } | { unusable: string }>;
}

/**
 * Destroys a user's data-encryption key (crypto-shredding): whatever was encrypted with it — in
 * Temporal histories, backups — becomes unreadable even where it cannot be deleted. Implemented by
 * the payload codec; optional, a purge without one deletes what it can reach. Must be idempotent:
 * the purge activity that calls it is retried.
 */
export interface UserKeyDestroyer {
  destroyUserKey(userKey: string): Promise<void>;
}
