import type { ConversationMessage, EntityRef, ImportanceLevel, Memory, MemoryCandidate, MemoryScope, MemoryStatus, MemoryType, MemoryVia, MessageRole, RelationRef } from './types';
import type { DigestSections } from './proactive/digest-content';
import type { ReminderSource, ReminderState, ReminderStatus } from './proactive/reminder-state';
import type { ClockTime, ProactiveSettings, UserSettings } from './proactive/settings';
import type { LlmProposal } from './decisions/llm-resolution';
import type { RejectedCandidate } from './extraction/provenance';
import type { LifecycleTransition } from './lifecycle/sweep';
import type { PurgeCounts } from './privacy/purge';
import type { Episode, EpisodeVectorOwed, EpisodeWrite } from './episodes/ports';
import type { EpisodeDraft } from './episodes/summarize';
import type { MessageHit, MessageRef, ShownLine, StoredLine } from './recall/exchanges';
import type { VectorHit } from './vector-hit';

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
export interface Embedder {
  /** A search query's vector (e5 models embed queries and passages differently). */
  embedQuery(input: { text: string }): Promise<number[]>;
  /** Vectors of stored texts, in the order given. */
  embedDocuments(input: { texts: string[] }): Promise<number[][]>;
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

/** Who a lifecycle change is attributed to in the audit trail. */
export interface LifecycleAudit {
  workflowId?: string;
  runId?: string;
  actor: string;
}

/** Result of one page of the decay pass. */
export interface DecayPageResult {
  /** Active memories in the page (locked or not). */
  scanned: number;
  /** Highest id in the page: the next page starts after it. Null when the page was empty. */
  lastId: string | null;
  /** Rows written: decay score changed and/or status changed. */
  updated: number;
  transitions: LifecycleTransition[];
}

/** A high-importance memory fetched (and locked) for the weekly reinforcement. */
export interface ReinforcementRow {
  id: string;
  userId: string;
  text: string;
  frequencyCount: number;
  associatedTopics: string[];
  importance: number;
  importanceLevel: ImportanceLevel;
  lastAccessedAt: Date;
  decayScore: number;
}

/** New importance of one memory, computed by the caller. */
export interface ReinforcementUpdate extends ImportancePatch {
  id: string;
}

/** A pending vector deletion of the lifecycle drain. */
export interface VectorDeletion {
  memoryId: string;
  userId: string;
}

/**
 * The lifecycle jobs' set-based pages, across all users by design (the daily sweep, the weekly
 * reinforcement, the vector-delete drain). Each page keeps postings, index statistics, vector
 * outbox and audit in step with the status changes, and skips rows a writer holds. Only reachable
 * inside a {@link UnitOfWork}: the locks a page takes last until it ends. Cursors are null at the start.
 */
export interface LifecycleRepository {
  /** One page of the decay pass after `afterId`: refresh decay, expire the due, archive the faded. */
  sweepDecayPage(input: { now: Date; afterId: string | null; limit: number; audit: LifecycleAudit; decayTolerance?: number }): Promise<DecayPageResult>;
  /** Expires up to `limit` archived memories whose lifetime has ended. */
  expireArchivedPage(input: { now: Date; limit: number; audit: LifecycleAudit }): Promise<LifecycleTransition[]>;
  /** Users after `afterUserId` holding more than `cap` active memories, in user id order. */
  usersOverCapacity(input: { cap: number; afterUserId: string | null; limit: number }): Promise<string[]>;
  /** Archives, per user, the active memories beyond the top `cap` by importance (never instructions). */
  archiveOverCapacity(input: { userIds: string[]; cap: number; now: Date; audit: LifecycleAudit }): Promise<LifecycleTransition[]>;
  /** High/critical active memories after `afterId` not accessed since `now`, locked. */
  lockReinforcementPage(input: { now: Date; afterId: string | null; limit: number }): Promise<ReinforcementRow[]>;
  /** Stores the recomputed importance and resets decay of the given memories, one audit event each. */
  applyReinforcement(input: { now: Date; updates: ReinforcementUpdate[]; audit: LifecycleAudit; reason: string }): Promise<LifecycleTransition[]>;
  /** Pending vector deletions after `afterId`, locked until the unit of work ends. */
  lockVectorDeletes(input: { afterId: string | null; limit: number }): Promise<VectorDeletion[]>;
  /** Clears deletions locked with {@link lockVectorDeletes} once the vector index confirmed them. */
  clearVectorDeletes(input: { entries: VectorDeletion[] }): Promise<number>;
  /** Records a failed deletion attempt (the entries stay for the next drain). */
  failVectorDeletes(input: { entries: VectorDeletion[]; error: string }): Promise<void>;
}

/** What erasing one memory removed besides the memory row (numbers only: they go in the erase event). */
export interface EraseCounts {
  events: number;
  messages: number;
  messageTerms: number;
  entities: number;
  digests: number;
  notifications: number;
}

/** Hard erasure of one memory and of everything that repeats its words. Only reachable inside a {@link UnitOfWork}. */
export interface MemoryErasure {
  /** Undefined when the user has no such memory; otherwise what went and the conversations that lost messages. */
  eraseMemory(input: { userKey: string; id: string; at: Date; actor: string }): Promise<{ counts: EraseCounts; conversations: string[]; messages: MessageRef[] } | undefined>;
  /** Clears the pending vector delete of an erased memory once the vector index confirmed it. */
  vectorErased(input: { userKey: string; id: string }): Promise<void>;
}

/**
 * Deletes a user's rows from every PostgreSQL table that holds any (a purge), table by table in an
 * order the foreign keys allow. Only reachable inside a {@link UnitOfWork}.
 */
export interface UserRowPurge {
  /**
   * Deletes up to `limit` (null: all) of the user's rows from the first table, at `from` (default:
   * the first) or after it, that still holds some. Undefined when none is left there or after;
   * otherwise the table, how many rows went, and where to resume (null: no table follows).
   */
  deleteNextRows(input: { userKey: string; from?: string; limit: number | null }): Promise<{ table: string; deleted: number; next: string | null } | undefined>;
}

/** One purge run as audited: a keyed reference of the user and counts, never a key or text. */
export interface PurgeAuditRecord {
  workflowId: string;
  runId: string;
  requestedAt: Date;
  completedAt: Date | null;
  counts: PurgeCounts;
}

/** The audit of purges (operators answering "was this person's data erased?"). */
export interface PurgeAuditLog {
  /** Starts the audit row of a purge run (idempotent: a retried activity finds it). */
  begin(input: { tenantId: string; userRef: string; workflowId: string; runId: string; requestedAt: Date }): Promise<void>;
  complete(input: { runId: string; completedAt: Date; counts: PurgeCounts }): Promise<void>;
  /** Past purges of a user ref, oldest first. */
  list(input: { tenantId: string; userRef: string }): Promise<PurgeAuditRecord[]>;
}

/** Keyset position of a retention page: the last (time, tiebreak) of the previous page. Times stay text: microseconds survive. */
export type RetentionKey = [string, string];

/** One page of a retention delete. */
export interface RetentionPage {
  /** Rows the page took (locked and deleted). */
  scanned: number;
  deleted: number;
  /** Last key of the page; null when it was empty. */
  last: RetentionKey | null;
}

/** A conversation of a user. */
export interface ConversationRef {
  userId: string;
  conversationId: string;
}

/**
 * Retention deletes by age, across all users by design, one keyset page per call (`after` null at
 * the start), skipping rows a writer holds. Only reachable inside a {@link UnitOfWork}.
 */
export interface RetentionRepository {
  /**
   * Deletes messages said before `cutoff`, with their postings; the conversations touched come
   * back for {@link dropEmptyConversations}, the deleted messages for their exchange vectors.
   */
  messagesPage(input: { cutoff: Date; after: RetentionKey | null; limit: number }): Promise<
    RetentionPage & { postings: number; conversations: ConversationRef[]; messages: (ConversationRef & { messageId: string })[] }
  >;
  /** Episodes that ended before `cutoff`, locked, for the caller to delete their vectors first. */
  lockEpisodes(input: { cutoff: Date; after: RetentionKey | null; limit: number }): Promise<(ConversationRef & { id: string; endedAt: string })[]>;
  /** Deletes locked episodes with their postings and statistics. */
  deleteEpisodes(input: { ids: string[] }): Promise<number>;
  /** Deletes the given conversations once nothing of them is left and their last message is older than `cutoff`. */
  dropEmptyConversations(input: { conversations: ConversationRef[]; cutoff: Date }): Promise<number>;
  notificationsPage(input: { cutoff: Date; after: RetentionKey | null; limit: number }): Promise<RetentionPage>;
  /** Digests of local days before the cutoff's (UTC) date. */
  digestsPage(input: { cutoff: Date; after: RetentionKey | null; limit: number }): Promise<RetentionPage>;
}

/** The repositories a {@link UnitOfWork} hands its work, all bound to the one transaction. */
export interface MemoryTransaction {
  /** Conversation side: what commits together with a message append, a reminder or a notification. */
  conversations: ConversationRepository;
  reminders: ReminderRepository;
  notifications: NotificationRepository;
  settings: SettingsRepository;
  memories: MemoryRepository;
  events: MemoryEventLog;
  graph: MemoryGraph;
  lifecycle: LifecycleRepository;
  erasure: MemoryErasure;
  purge: UserRowPurge;
  retention: RetentionRepository;
  /** Extraction watermarks (docs/reliability.md): moved in the transaction of the decision that covers them. */
  watermarks: ExtractionWatermarks;
}

/** How far a conversation's messages have been extracted and decided. */
export interface ExtractionWatermarks {
  /** Moves the conversation's watermark forward to `seq` (never back) and drops the cached pages it passed; `ended` also marks the conversation ended. */
  advance(input: { userId: string; conversationId: string; seq: number; ended?: boolean }): Promise<void>;
}

/** Where a conversation's extraction stands: done up to `extractedSeq`, newest message `lastSeq`. */
export interface ExtractionMark {
  extractedSeq: number;
  lastSeq: number;
}

/** A conversation of a user (as the extraction reconciler finds it). */
export interface StaleConversation {
  userId: string;
  conversationId: string;
}

/** The outcome of asking for a page's extractor output. */
export type PageClaim = { state: 'mine' } | { state: 'done'; output: unknown } | { state: 'busy'; leaseUntil: Date };

/** One page of a conversation as the extractor read it. */
export interface PageKey {
  userId: string;
  conversationId: string;
  fromSeq: number;
  toSeq: number;
  /** Extractor name and timezone: what else decides the output besides the messages. */
  variant: string;
}

/**
 * The extraction watermark of each conversation (which messages have been extracted) and the
 * leased cache of extractor output per page, so a retried attempt never pays for a page twice.
 */
export interface ExtractionRunRepository extends ExtractionWatermarks {
  /** The conversation's watermark and newest message; undefined when it has no messages at all. */
  mark(input: { userId: string; conversationId: string }): Promise<ExtractionMark | undefined>;
  /**
   * Conversations of every user with messages after their watermark whose newest message arrived
   * more than `idleSeconds` ago, or that an end call asked to extract while Temporal was
   * unreachable, least recently reconciled first; each one returned is stamped, so the next call
   * moves on to others.
   */
  claimStale(input: { idleSeconds: number; limit: number }): Promise<StaleConversation[]>;
  /**
   * Records an end call that could not reach Temporal: the reconciler extracts the conversation on
   * its next tick, without waiting for the idle time. False when the conversation does not exist.
   */
  requestEnd(input: { userId: string; conversationId: string }): Promise<boolean>;
  /** Claims the page for `attemptId` (a lease of `leaseMs`), or reports its stored output, or another attempt's live lease. An expired lease is taken over. */
  claimPage(input: { key: PageKey; attemptId: string; leaseMs: number }): Promise<PageClaim>;
  /** Extends this attempt's lease while its model call runs. */
  renewLease(input: { key: PageKey; attemptId: string; leaseMs: number }): Promise<void>;
  /** Gives the lease up (the call failed): the next attempt claims it at once. */
  releaseLease(input: { key: PageKey; attemptId: string }): Promise<void>;
  /** Stores the page's output unless one is stored already, and returns the stored one (the first answer wins). */
  savePage(input: { key: PageKey; output: unknown }): Promise<unknown>;
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

/**
 * Runs work in one transaction: everything commits together or nothing does (any error rolls
 * back and is rethrown).
 */
export interface UnitOfWork {
  /**
   * Under the user's write lock: writes for one user are serialised (two extractions cannot both
   * create the same fact or lose a supersede) while users stay parallel.
   */
  forUser<T>(input: { userId: string; work: (tx: MemoryTransaction) => Promise<T> }): Promise<T>;
  /** Without a user lock: the lifecycle jobs' pages, which lock the rows they change themselves. */
  run<T>(input: { work: (tx: MemoryTransaction) => Promise<T> }): Promise<T>;
}

/** How an extraction went: which extractor, every problem with a model's output, and what was refused. */
export interface ExtractionReport {
  extractor: string;
  attempts: number;
  problems: string[];
  /** The model's output stayed unusable and the offline rules decided instead. */
  fellBack: boolean;
  /**
   * Candidates dropped because their provenance does not hold (unknown message ids, a user memory
   * without a user message, words not in the user's own words, an instruction or forget request
   * the user did not give), each with its reason. Nothing of them was written.
   */
  rejected: RejectedCandidate[];
  /**
   * The recall net (offline extractor with an embedder): how many statements the rules left that
   * it judged, and how many candidates it proposed (before the provenance screen).
   */
  net?: { statements: number; proposed: number };
}

export interface ExtractionOutput {
  candidates: MemoryCandidate[];
  report: ExtractionReport;
}

/** Turns a conversation into memory candidates. Implementations: offline rules, or an LLM. */
export interface Extractor {
  readonly name: string;
  extract(input: { messages: ConversationMessage[]; timezone: string }): Promise<ExtractionOutput>;
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

// ─── Conversation side ──────────────────────────────────────────────────────────────────────────

/**
 * Search over the user's raw messages (L0): BM25, messages said in date ranges, the neighbours
 * that pair a message into an exchange, and which messages must stay hidden.
 */
export interface MessageSearch {
  /** BM25 over the user's messages, best first. */
  bm25(input: { userId: string; tokens: string[]; k: number }): Promise<MessageHit[]>;
  /** Messages said inside the ranges: those matching the words first, then the rest in order. */
  saidIn(input: { userId: string; tokens: string[]; ranges: readonly { start: Date; end: Date }[]; k: number }): Promise<MessageHit[]>;
  /** The given messages with their neighbours, each flagged `hidden` when it must not be shown. */
  withNeighbours(input: { userId: string; refs: readonly MessageRef[]; staleSources: boolean; now: Date }): Promise<{ anchor: ShownLine; previous?: ShownLine; next?: ShownLine }[]>;
  /** Every message of the user that a forget request covers. */
  forgotten(input: { userId: string }): Promise<MessageRef[]>;
}

/** Episodes (one conversation, one local day) and their BM25 postings. Every call takes the user. */
export interface EpisodeStore {
  /** Makes the conversation's stored episodes equal to `drafts` (idempotent, one transaction). */
  replaceForConversation(input: { userId: string; conversationId: string; timeZone: string; drafts: EpisodeDraft[]; workflowId?: string; runId?: string }): Promise<EpisodeWrite>;
  get(input: { userId: string; ids: string[] }): Promise<Episode[]>;
  /** Episodes by the query's words (BM25 over summaries) and by the dates it names, each best first. */
  search(input: { userId: string; tokens: string[]; ranges: readonly { start: Date; end: Date }[]; k: number }): Promise<{ byWords: Episode[]; byDate: Episode[] }>;
  /** Episodes whose summary was built from any of these messages. */
  summarisingAny(input: { userId: string; messageIds: string[] }): Promise<{ id: string; conversationId: string }[]>;
  /** Episodes whose vector is missing or stale. */
  vectorsOwed(input: { userId: string; limit?: number }): Promise<EpisodeVectorOwed[]>;
  markVectorWritten(input: { userId: string; id: string; contentHash: string }): Promise<void>;
}

/**
 * What an exchange vector embeds: one line alone, or a pair (a user line and its reply, keyed by
 * its first message, so re-indexing it when its reply arrived overwrites it).
 */
export type ExchangeVectorUnit = 'line' | 'pair';

/** An exchange vector to write. */
export interface ExchangeVectorItem {
  id: string;
  embedding: number[];
  conversationId: string;
  /** The line embedded, or the pair's first message (the user line, or a lone line). */
  messageId: string;
  unit: ExchangeVectorUnit;
}

/** A nearest exchange vector: the message it names, and its cosine similarity. */
export interface ExchangeVectorHit {
  id: string;
  similarity: number;
  conversationId: string;
  messageId: string;
  unit: ExchangeVectorUnit;
}

/**
 * Vectors of raw exchanges (a user line and its reply), one collection per user. Every call
 * takes the user: nothing can be searched, written or removed across users.
 */
export interface ExchangeVectorIndex {
  upsert(input: { userId: string; items: ExchangeVectorItem[] }): Promise<void>;
  /** The k nearest vectors of one unit. */
  query(input: { userId: string; embedding: number[]; k: number; unit: ExchangeVectorUnit }): Promise<ExchangeVectorHit[]>;
  remove(input: { userId: string; ids: string[] }): Promise<void>;
  /** Deletes all of the user's exchange vectors (a purge); false when there were none. Idempotent. */
  dropUser(userId: string): Promise<boolean>;
}

/** How far each conversation's messages are in the exchange index. */
export interface ExchangeIndexWatermarks {
  /** Conversations with messages past their exchange watermark, oldest activity first. */
  owed(input: { limit: number }): Promise<{ userId: string; conversationId: string; indexedSeq: number }[]>;
  /**
   * The messages after `afterSeq` (at most `limit`), preceded by the last message at or before it
   * (a user line indexed alone is re-indexed with the reply that came later).
   */
  linesAfter(input: { userId: string; conversationId: string; afterSeq: number; limit: number }): Promise<StoredLine[]>;
  /** Moves the watermark forward to `seq` (never back). */
  advance(input: { userId: string; conversationId: string; seq: number }): Promise<void>;
}

// Conversations, reminders, notifications, digests, settings and users. Like the memory side,
// services are the only callers; the PostgreSQL adapters are built once in src/runtime.ts and the
// ones a transaction needs are also handed out by the {@link UnitOfWork}.

/** A message as an entry point hands it over for storage. */
export interface IncomingMessage {
  id: string;
  role: MessageRole;
  content: string;
  at: Date;
  truncated: boolean;
}

/** A stored message with its arrival order in the conversation. */
export interface StoredMessage extends ConversationMessage {
  seq: number;
  conversationId: string;
}

/** A message as the digest and nudges read a user's day. */
export interface DayMessage {
  conversationId: string;
  role: 'user' | 'assistant';
  content: string;
  at: Date;
}

/** Raw messages, kept for provenance and conversation search; always scoped by user. */
export interface ConversationRepository {
  /** Appends messages (and their search postings); a message id seen before is skipped, which makes the call idempotent. */
  append(input: { userId: string; conversationId: string; messages: IncomingMessage[] }): Promise<{ inserted: string[]; duplicates: string[] }>;
  /**
   * Takes the conversation's append lock until the unit of work ends (so its size cap cannot be
   * raced past) and counts its messages, and how many of `ids` it holds already. Only meaningful
   * inside a {@link UnitOfWork}.
   */
  lockForAppend(input: { userId: string; conversationId: string; ids: string[] }): Promise<{ total: number; known: number }>;
  /** A page of a conversation's messages in arrival order, after `afterSeq`. */
  page(input: { userId: string; conversationId: string; afterSeq: number; limit: number }): Promise<StoredMessage[]>;
  exists(input: { userId: string; conversationId: string }): Promise<boolean>;
  /** Records that the conversation ended (its extraction ran). */
  markEnded(input: { userId: string; conversationId: string }): Promise<void>;
  /** The user's messages said in [from, to), in order. */
  messagesBetween(input: { userId: string; from: Date; to: Date; limit?: number }): Promise<DayMessage[]>;
}

/** A reminder as its workflow last recorded it. */
export interface ReminderRecord {
  id: string;
  userId: string;
  text: string;
  status: ReminderStatus;
  dueAt: Date;
  timeZone: string;
  rrule: string | null;
  seriesStart: Date | null;
  assumedTime: boolean;
  occurrence: number;
  firedAt: Date | null;
  snoozedUntil: Date | null;
  dismissedAt: Date | null;
  fireCount: number;
  snoozeCount: number;
  /** The workflow's change counter this row mirrors (see ReminderState.version). */
  version: number;
  source: ReminderSource;
  workflowId: string;
  createdAt: Date;
  updatedAt: Date;
}

export type NewReminder = Pick<ReminderRecord, 'id' | 'userId' | 'text' | 'dueAt' | 'timeZone' | 'rrule' | 'seriesStart' | 'assumedTime' | 'source' | 'workflowId'>;

/** Reminders as their workflows last recorded them; every call is scoped by user. */
export interface ReminderRepository {
  /** Inserts the reminder unless it exists; the stored row and whether this call created it. */
  insert(input: { reminder: NewReminder; at: Date }): Promise<{ reminder: ReminderRecord; created: boolean }>;
  /**
   * Mirrors the workflow's state, only over an older version: a write that arrives late (an
   * activity that timed out but still ran, a retry after a newer write) changes nothing. A state
   * without a version (scheduled by a worker from before versioning) only applies while no
   * versioned write has happened. The row when this write applied, undefined otherwise.
   */
  applyState(input: { userId: string; state: ReminderState; at: Date }): Promise<ReminderRecord | undefined>;
  /**
   * A recurring reminder's next occurrence replaces the previous one's state, once: only a row
   * still on an earlier occurrence changes. Its version is one above the row's (at least the
   * state's), so every write of the previous run is older.
   */
  startOccurrence(input: { userId: string; state: ReminderState; at: Date }): Promise<ReminderRecord | undefined>;
  get(input: { userId: string; id: string }): Promise<ReminderRecord | undefined>;
  /** Newest due first. */
  list(input: { userId: string; status?: ReminderStatus; limit: number }): Promise<ReminderRecord[]>;
  /** Open reminders next due in [from, to): scheduled ones by due time, snoozed ones by snooze end. */
  dueBetween(input: { userId: string; from: Date; to: Date }): Promise<ReminderRecord[]>;
  remove(input: { userId: string; id: string }): Promise<void>;
  /**
   * Open reminders whose workflow was never seen to start, created before `createdBefore` — across
   * users (the reminder reconciler's scan); each row carries its own user. Rows never tried come
   * first (oldest first), then those whose start failed, least recently failed first.
   */
  unstarted(input: { createdBefore: Date; limit: number }): Promise<ReminderRecord[]>;
  /** Records that the reminder's workflow exists (the first time only). */
  markWorkflowStarted(input: { userId: string; id: string; at: Date }): Promise<void>;
  /** Records a failed start, which sends the row behind the rows not yet tried. */
  markWorkflowStartFailed(input: { userId: string; id: string; at: Date; error: string }): Promise<void>;
}

export type NotificationKind = 'reminder' | 'digest' | 'nudge';

export interface NotificationRecord {
  id: string;
  seq: number;
  userId: string;
  kind: NotificationKind;
  title: string;
  body: string;
  reminderId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
  readAt: Date | null;
}

export interface NewNotification {
  id: string;
  userId: string;
  kind: NotificationKind;
  title: string;
  body: string;
  reminderId?: string;
  data?: Record<string, unknown>;
  /** The same key never stores (or pushes) a second notification. */
  idempotencyKey: string;
}

/** Events announced to every API process: ids only, the listener reads the rows (scoped by user). */
export type ProactiveEvent =
  | { type: 'notification'; userId: string; id: string; seq: number }
  | { type: 'reminder'; userId: string; reminderId: string; status: string };

/** The user's notifications (fired reminders, digests, nudges) and the announcements of new ones. */
export interface NotificationRepository {
  /** Stores a notification once per idempotency key; the row and whether this call created it. */
  insert(input: { notification: NewNotification; at: Date }): Promise<{ notification: NotificationRecord; created: boolean }>;
  /**
   * Announces an event to the API processes. Delivered when the unit of work commits, so inside
   * one a listener never hears of a row it cannot read yet.
   */
  announce(event: ProactiveEvent): Promise<void>;
  get(input: { userId: string; id: string }): Promise<NotificationRecord | undefined>;
  /** Newest first, or — with `afterSeq` — everything after a sequence number, oldest first (an event stream's resume). */
  list(input: { userId: string; limit: number; kind?: NotificationKind; unread?: boolean; afterSeq?: number }): Promise<NotificationRecord[]>;
  countSince(input: { userId: string; kind: NotificationKind; since: Date }): Promise<number>;
  /** Marks the unread ones among `ids` read; how many changed. */
  markRead(input: { userId: string; ids: string[]; at: Date }): Promise<number>;
}

/** A user's time zone and proactive settings (digest time, nudges). */
export interface SettingsRepository {
  /** Undefined for an unknown user; missing keys take the defaults. */
  get(input: { userId: string; defaults?: { digestTime?: ClockTime } }): Promise<UserSettings | undefined>;
  /** The stored IANA zone ('UTC' until set); undefined for an unknown user. */
  timeZone(input: { userId: string }): Promise<string | undefined>;
  /** Writes the given fields, keeping every other stored setting; false when the user does not exist. */
  update(input: { userId: string; timezone?: string; digestTime?: ClockTime; proactive?: ProactiveSettings }): Promise<boolean>;
}

/** Users by their storage key. */
export interface UserRepository {
  /** Registers (tenant, user) under its key on the user's first write. Idempotent. */
  ensure(input: { userKey: string; tenantId: string; externalId: string }): Promise<void>;
  exists(input: { userKey: string }): Promise<boolean>;
}

export interface DigestRecord {
  userId: string;
  date: string;
  timeZone: string;
  text: string;
  sections: DigestSections;
  generatedBy: 'llm' | 'template';
  createdAt: Date;
  updatedAt: Date;
}

/** One digest per user and local day; a later run of the same day replaces the text. */
export interface DigestRepository {
  upsert(input: { digest: Omit<DigestRecord, 'createdAt' | 'updatedAt'>; at: Date }): Promise<DigestRecord>;
  /** Digests of the last `days` local days up to and including `today` (YYYY-MM-DD), newest first. */
  recent(input: { userId: string; today: string; days: number }): Promise<DigestRecord[]>;
}

/** An active memory as the digest and nudges weigh it. */
export interface ProactiveMemory {
  id: string;
  text: string;
  type: string;
  importanceLevel: string;
}

/** What a digest and the nudge triggers read of a user's memories. */
export interface ProactiveMemorySource {
  /** High and critical active memories created, changed or recalled in [from, to). */
  importantTouched(input: { userId: string; from: Date; to: Date; limit?: number }): Promise<ProactiveMemory[]>;
  /** Active goals and pain points, most important and recently touched first. */
  goalsAndPainPoints(input: { userId: string; limit?: number }): Promise<(ProactiveMemory & { frequencyCount: number; createdAt: Date; updatedAt: Date })[]>;
}

export type PageTokenKind = 'code' | 'session';

/**
 * Ids of memory-page tokens that may not be used again: exchanged sign-in codes and signed-out
 * sessions. A record matters only until the token's own expiry.
 */
export interface PageTokenRepository {
  /** Records the token as used; true for the first caller only, however many race. */
  markUsed(input: { tokenId: string; kind: PageTokenKind; expiresAt: Date }): Promise<boolean>;
  isUsed(input: { tokenId: string }): Promise<boolean>;
  /** Forgets tokens that have expired anyway (their signature check refuses them by itself). */
  deleteExpired(input: { now: Date }): Promise<number>;
}

/** The sections of a user's export, in document order. */
export type ExportSection = 'memories' | 'otherEvents' | 'conversations' | 'messages' | 'episodes' | 'reminders' | 'notifications' | 'digests' | 'entities' | 'relations';

/** A page of export rows and the key to continue after (null when this was the last page). */
export interface ExportPage<K = unknown> {
  rows: Record<string, unknown>[];
  next: K | null;
}

/** The user row as exported (no internal key). */
export interface ExportedUser {
  tenantId: string;
  timezone: string;
  settings: unknown;
  createdAt: string | null;
}

/** Keyset-paged reads of everything stored about a user, as export views (camelCase, ISO times, no internal references). */
export interface UserExportReader {
  user(input: { userKey: string }): Promise<ExportedUser | undefined>;
  /** The user's persona (the profile recall injects) as stored, or null when there is none. */
  profile(input: { userKey: string }): Promise<Record<string, unknown> | null>;
  /** The user's scene index (navigation block, L2) as stored, or null when there is none. */
  scenes(input: { userKey: string }): Promise<Record<string, unknown> | null>;
  /** The section's rows after `after` (null: from the start), in key order. */
  page(input: { section: ExportSection; userKey: string; after: unknown; limit: number }): Promise<ExportPage>;
}

/** A consistent snapshot to read an export from, held until closed (`completed`: the document was written in full). */
export interface UserExportSnapshot extends UserExportReader {
  close(input: { completed: boolean }): Promise<void>;
}

export interface UserExportSource {
  /** `statementTimeoutMs` bounds each read, `idleTimeoutMs` the pause between two reads (the snapshot is dropped past either). */
  openSnapshot(input?: { statementTimeoutMs?: number; idleTimeoutMs?: number }): Promise<UserExportSnapshot>;
}

/** A per-user API key as stored (issue #20): never the secret, and its digest only for authentication. */
export interface UserApiKeyRecord {
  keyId: string;
  /** The user key (pseudonym of tenant and user) the key is bound to. */
  userKey: string;
  tenantId: string;
  label: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  /** Updated at most once a minute, so authentication stays a read. */
  lastUsedAt: Date | null;
}

/** Per-user API keys (`user_api_keys`). Every method but `findForAuth` is scoped by the user key. */
export interface UserApiKeyRepository {
  /**
   * Stores a new key unless the user already holds `maxKeys` (their expired keys are deleted first);
   * undefined when they do. Concurrent creations for one user are serialised, so the bound holds.
   */
  create(input: { keyId: string; userKey: string; tenantId: string; secretHash: Buffer; label: string | null; expiresAt: Date | null; now: Date; maxKeys: number }): Promise<UserApiKeyRecord | undefined>;
  list(input: { userKey: string }): Promise<UserApiKeyRecord[]>;
  /** Deletes the key; false when the user has no key of that id. */
  delete(input: { userKey: string; keyId: string }): Promise<boolean>;
  /** The key of this id with its digest and its user's own id (the tenant's), to authenticate a request. */
  findForAuth(input: { keyId: string }): Promise<(UserApiKeyRecord & { secretHash: Buffer; externalUserId: string }) | undefined>;
  markUsed(input: { keyId: string; at: Date }): Promise<void>;
}
