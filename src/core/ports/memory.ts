/** Ports of memories, their vectors, events, graph and the vector outbox (src/core/ports.ts re-exports every port). */
import type { EntityRef, ImportanceLevel, Memory, MemoryScope, MemoryStatus, MemoryType, MemoryVia, RelationRef } from '../types';
import type { VectorHit } from '../vector-hit';
import type { EraseCounts } from './privacy';

export type { VectorHit };

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
  /** The stored vectors of these memories of the user (ids with none are absent from the map). */
  vectorsOf(input: { userId: string; ids: string[] }): Promise<Map<string, number[]>>;
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

// ─── Memory side ────────────────────────────────────────────────────────────────────────────────
// Services are the only callers of these ports; src/runtime.ts builds the adapters once
// (docs/architecture.md, "Ports and adapters"). Every method takes the user it acts
// for, except the lifecycle jobs' set-based pages, which run across users by design.

/** Turns texts into vectors (the e5 embedder, or the hashing one in tests). */
/**
 * Who waits for an embedding: a user (a query, one memory written or restored) or nobody in
 * particular (re-syncing after an outage, indexing episodes and replies). Bulk work goes in the
 * background lane so it never holds a user's request up.
 */
export type EmbeddingLane = 'interactive' | 'background';

export interface Embedder {
  /** A search query's vector (e5 models embed queries and passages differently). */
  embedQuery(input: { text: string }): Promise<number[]>;
  /** Vectors of stored texts, in the order given; the interactive lane unless said otherwise. */
  embedDocuments(input: { texts: string[]; lane?: EmbeddingLane }): Promise<number[][]>;
}

/** A memory as the write path hands it to the repository: the row plus what the BM25 index needs. */
export interface NewMemory extends Memory {
  normalizedText: string;
  importanceComponents: Record<string, number>;
  /** Index tokens of the text (and keywords), computed by the caller with the shared tokenizer. */
  tokens: string[];
}

/** Importance of a memory as the write and lifecycle paths store it (score, level and its components). */
export interface ImportancePatch {
  importance: number;
  importanceLevel: ImportanceLevel;
  components: Record<string, number>;
}

/** Reads one user's memories by id, by exact (normalised) text, or as a paged list. */
export interface MemoryReader {
  get(input: { userId: string; id: string }): Promise<Memory | undefined>;
  /** Active, unexpired memories among `ids` (as of `now`, default the database clock), for hydrating search hits; order is not preserved. */
  getActive(input: { userId: string; ids: string[]; now?: Date }): Promise<Memory[]>;
  findActiveByNormalized(input: { userId: string; normalized: string }): Promise<Memory | undefined>;
  /** The user's most recently archived memory with exactly this normalised text, if any. */
  findArchivedByNormalized(input: { userId: string; normalized: string }): Promise<Memory | undefined>;
  list(input: { userId: string; status?: MemoryStatus; type?: MemoryType; limit: number; offset: number }): Promise<{ memories: Memory[]; total: number }>;
}

/** The recall routes over one user's active memories; each answers ids (or memories) best first. */
export interface MemorySearch {
  /** BM25 over the user's active memories' postings. */
  bm25(input: { userId: string; tokens: string[]; k: number; types?: MemoryType[] }): Promise<{ id: string; score: number }[]>;
  /** Recently touched and important active memories (the "上次/最近/last time" route). */
  recent(input: { userId: string; k: number; types?: MemoryType[] }): Promise<string[]>;
  /** The most important active memories at or above `minImportance`, standing instructions aside. */
  mostImportant(input: { userId: string; k: number; minImportance: number; types?: MemoryType[]; now?: Date }): Promise<string[]>;
  /**
   * Active memories of the given types (and scope), most important first. Pending memories are
   * left out: this is how recall loads standing instructions, and unconfirmed ones must not crowd
   * the user's own out of its `k`.
   */
  byTypes(input: { userId: string; types: MemoryType[]; k: number; scope?: MemoryScope; now?: Date }): Promise<Memory[]>;
}

/** The time route: active, unexpired memories said inside one of the date ranges, most recent first. */
export interface MemoryTimeRoute {
  memoriesSaidIn(input: { userId: string; ranges: readonly { start: Date; end: Date }[]; k: number; now: Date }): Promise<string[]>;
}

/**
 * Writes to one user's memories. Only reachable inside a {@link UnitOfWork}: each write keeps the
 * row, the BM25 postings and the vector outbox in step, which takes several statements.
 */
export interface MemoryRepository extends MemoryReader, MemorySearch {
  /** Inserts the memory (postings when active, a vector op in the outbox); false when the id exists already. */
  insert(memory: NewMemory): Promise<boolean>;
  /** The memory, locked for a status change until the unit of work ends (the sweep then skips it). */
  lock(input: { userId: string; id: string }): Promise<Memory | undefined>;
  /** Moves a memory to another status; `tokens` are needed when it becomes active again. */
  setStatus(input: { userId: string; id: string; status: MemoryStatus; at: Date; supersededBy?: string; tokens?: string[] }): Promise<Memory | undefined>;
  /** One more mention or recall: frequency +1, last access (and last recall) moved to `at`, importance stored, decay reset. */
  reinforce(
    input: { userId: string; id: string; at: Date; recalled: boolean; emotionTags?: string[]; messageIds?: string[] } & ImportancePatch,
  ): Promise<Memory | undefined>;
  /** Sets importance and resets decay (a restore; the status change itself goes through setStatus). */
  setImportance(input: { userId: string; id: string } & ImportancePatch): Promise<void>;
  linkSupersedes(input: { userId: string; newId: string; oldId: string }): Promise<void>;
  /** Ends a memory's wait for the user's confirmation; undefined when it is not a pending memory of this user. */
  confirm(input: { userId: string; id: string; at: Date }): Promise<Memory | undefined>;
}

/** What was decided about a memory, by whom, in which workflow run: one row of the audit trail. */
export interface MemoryEvent {
  userId: string;
  memoryId: string | null;
  action: string;
  reason: string;
  before?: unknown;
  after?: unknown;
  workflowId?: string;
  runId?: string;
  conversationId?: string;
  messageIds?: string[];
  actor: string;
  /** How the candidate this event decides arrived; absent on events that are not about a written candidate. */
  via?: MemoryVia;
  /** Makes a retried activity record its decision once. */
  idempotencyKey?: string;
}

export interface StoredMemoryEvent extends MemoryEvent {
  id: string;
  createdAt: Date;
}

/** The audit trail of memory decisions (`memory_events`). */
export interface MemoryEventLog {
  /** Records the event at `at` (default now); false when an event with the same idempotency key exists already. */
  append(input: { event: MemoryEvent; at?: Date }): Promise<boolean>;
  findByKey(input: { userId: string; key: string }): Promise<StoredMemoryEvent | undefined>;
  /** Every event of one memory, oldest first. */
  history(input: { userId: string; memoryId: string }): Promise<StoredMemoryEvent[]>;
}

/** The per-user graph: entities, relations between them, each linked to the memory that states it. */
export interface MemoryGraph {
  link(input: { userId: string; memoryId: string; entities: EntityRef[]; relations: RelationRef[] }): Promise<void>;
  /** Entities of a user with the number of active memories mentioning them. */
  entities(input: { userId: string }): Promise<{ name: string; kind: string; memories: number }[]>;
}

/** A vector write PostgreSQL committed and the vector index has not confirmed yet. */
export interface OutboxEntry {
  memoryId: string;
  userId: string;
  op: 'upsert' | 'delete';
  enqueuedAt: Date;
  text: string;
  type: string;
  createdAt: Date;
}

/** Pending vector writes (the outbox the memory writes fill in their own transaction). */
export interface VectorOutbox {
  /** Oldest first; all users', one user's, or those of the given memories. */
  pending(input: { limit: number; userId?: string; ids?: string[] }): Promise<OutboxEntry[]>;
  /** Clears an entry unless something newer was enqueued for the memory since `enqueuedAt`. */
  done(input: { userId: string; memoryId: string; enqueuedAt: Date }): Promise<void>;
  /** Records a failed attempt; the entries stay for the next sync. */
  failed(input: { userId: string; memoryIds: string[]; error: string }): Promise<void>;
}

/** A vector write that is due: PostgreSQL committed it, the vector index has not confirmed it. */
export interface DueOutboxEntry {
  memoryId: string;
  userId: string;
  op: 'upsert' | 'delete';
  enqueuedAt: Date;
  attempts: number;
  /** The memory as it is now; undefined when the row is gone (an erased memory's delete). */
  memory?: { text: string; type: string; createdAt: Date };
}

/** How failed entries are retried: base·2^attempts (capped at max), dead-lettered at maxAttempts. */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface OutboxHealth {
  /** Entries waiting for the vector index (due now or backing off), dead letters excluded. */
  pending: number;
  deadLetters: number;
  /** Age of the oldest pending entry; null when nothing is pending. */
  oldestPendingSeconds: number | null;
}

/** The vector outbox as the scheduled drain sees it: due entries, retries with backoff, dead letters. */
export interface OutboxRetryRepository {
  /** Due entries of every user (or of one), oldest due first. */
  due(input: { limit: number; userId?: string }): Promise<DueOutboxEntry[]>;
  /** Clears the entry unless it was re-enqueued meanwhile. */
  done(entry: DueOutboxEntry): Promise<void>;
  /** One more failed attempt each: backs off, dead-letters at the policy's attempts. */
  failed(input: { entries: DueOutboxEntry[]; error: string; policy: RetryPolicy }): Promise<{ deadLettered: number }>;
  /** Counts for the operator's health check. */
  health(): Promise<OutboxHealth>;
}

/** The conflict judge's answer, before validation (src/core/decisions/llm-resolution.ts checks it). */
export interface LlmProposal {
  action: 'create' | 'reinforce' | 'update' | 'supersede' | 'ignore';
  /** Labels of the neighbours it acts on ("n1"…). */
  targets: string[];
  reason: string;
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

/** What the hard erase of one memory did. */
export interface MemoryEraseResult {
  id: string;
  erased: true;
  removed: EraseCounts;
  /** False when Chroma could not delete the vector now: the outbox keeps the delete for the daily sweep. */
  vectorRemoved: boolean;
  /** Conversations whose episodes were rebuilt without the erased messages; false if that failed (see `episodesRebuilt`). */
  conversations: string[];
  episodesRebuilt: boolean;
}

/**
 * The hard erase of one memory, as a MemoryDecision "erase" asks for it (activities/memory/decisions.ts).
 * The privacy capability, above memory, implements it (src/privacy/memory-erase.ts); the worker
 * wires it in src/runtime.ts. Unknown id: not_found (an erased memory is unknown afterwards).
 */
export interface MemoryEraser {
  eraseMemory(input: { userKey: string; id: string; now: Date; actor: string }): Promise<MemoryEraseResult>;
}
