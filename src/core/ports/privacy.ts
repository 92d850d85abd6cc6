/** Ports of erasure, purge, retention and export (src/core/ports.ts re-exports every port). */
import type { MessageRef } from '../exchange-lines';

/** What a purge has done so far, per store; the audit row keeps it (numbers only). */
export interface PurgeCounts {
  /** Rows deleted per table. */
  postgres: Record<string, number>;
  /** Collections dropped per kind (memories, episodes). */
  chroma: Record<string, number>;
  schedulesDeleted: number;
  workflowsTerminated: number;
  workflowsDeleted: number;
  dataKeyDestroyed: boolean;
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
