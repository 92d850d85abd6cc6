/** Ports of conversations, their messages, extraction runs and extractors (src/core/ports.ts re-exports every port). */
import type { ConversationMessage, MemoryCandidate, MessageRole } from '../types';

/** A candidate that was dropped, as the extraction report records it. */
export interface RejectedCandidate {
  text: string;
  type: string;
  intent: string;
  messageIds: string[];
  reason: string;
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

/** A message as an entry point hands it over for storage. */
export interface IncomingMessage {
  id: string;
  role: MessageRole;
  content: string;
  at: Date;
  truncated: boolean;
}

/**
 * A message's conversation-search postings: its index terms with their tf (parallel arrays, the
 * shape that crosses a thread boundary cheaply), and its length as BM25 counts it, the sum of the
 * tf. Segmenting a batch is seconds of CPU for the largest one, so it is done before the append
 * and off the event loop that serves other users (the rule pool's `indexPostings`).
 */
export interface MessagePostings {
  terms: string[];
  tfs: number[];
  docLength: number;
}

/** A message ready to be stored: as an entry point hands it over, with its postings. */
export interface IndexedMessage extends IncomingMessage {
  postings: MessagePostings;
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
  /**
   * Appends messages and the postings they come with; a message id seen before is skipped (its
   * postings unused), which makes the call idempotent. Does no segmentation of its own: it runs
   * inside the conversation's append lock and transaction.
   */
  append(input: { userId: string; conversationId: string; messages: IndexedMessage[] }): Promise<{ inserted: string[]; duplicates: string[] }>;
  /**
   * Takes the conversation's append lock until the unit of work ends (so its size cap cannot be
   * raced past) and counts its messages, and how many of `ids` it holds already. Only meaningful
   * inside a {@link UnitOfWork}.
   */
  lockForAppend(input: { userId: string; conversationId: string; ids: string[] }): Promise<{ total: number; known: number }>;
  /** The conversation's messages with these ids, as stored (so a re-sent id can be compared with what it holds). */
  stored(input: { userId: string; conversationId: string; ids: string[] }): Promise<{ id: string; role: MessageRole; content: string }[]>;
  /** A page of a conversation's messages in arrival order, after `afterSeq`. */
  page(input: { userId: string; conversationId: string; afterSeq: number; limit: number }): Promise<StoredMessage[]>;
  /** The conversation's last message at or before `seq` (seqs may have gaps), if any. */
  lastUpTo(input: { userId: string; conversationId: string; seq: number }): Promise<StoredMessage | undefined>;
  exists(input: { userId: string; conversationId: string }): Promise<boolean>;
  /** Records that the conversation ended (its extraction ran). */
  markEnded(input: { userId: string; conversationId: string }): Promise<void>;
  /** The user's messages said in [from, to), in order. */
  messagesBetween(input: { userId: string; from: Date; to: Date; limit?: number }): Promise<DayMessage[]>;
}

/** A message held out of extraction, with why (migrations/1796650000000_message-quarantine.sql). */
export interface QuarantinedMessage {
  messageId: string;
  seq: number;
  reason: 'timeout' | 'error';
  detail: string;
  attempts: number;
  firstFailedAt: Date;
  lastFailedAt: Date;
  quarantinedAt: Date | null;
}

/**
 * Messages whose rule work failed or timed out, and those held out of extraction for it
 * (docs/write-path.md#quarantine). Every method names the user except `count`, the operator's
 * figure over everyone (/healthz, /metrics).
 */
export interface MessageQuarantine {
  /** The quarantined messages of a conversation with fromSeq < seq <= toSeq. */
  held(input: { userId: string; conversationId: string; fromSeq: number; toSeq: number }): Promise<Set<number>>;
  /** Records one failed attempt; quarantines the message once `quarantineAt` attempts have failed. */
  recordFailure(input: { userId: string; conversationId: string; messageId: string; seq: number; reason: 'timeout' | 'error'; detail: string; quarantineAt: number }): Promise<QuarantinedMessage>;
  /** The conversation's quarantine rows, oldest first. */
  list(input: { userId: string; conversationId: string }): Promise<QuarantinedMessage[]>;
  /** How many messages are quarantined, over every user. */
  count(): Promise<number>;
}
