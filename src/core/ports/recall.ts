/** Ports of recall: query rewriting, message search, episodes and the exchange index (src/core/ports.ts re-exports every port). */
import type { MessageHit, MessageRef, ShownLine, StoredLine } from '../exchange-lines';
import type { VectorHit } from '../vector-hit';

/**
 * Turns a chat message and the messages before it into extra recall queries (pronouns resolved,
 * alternatives named). Optional: recall runs without one; an LLM adapter implements it.
 */
export interface QueryRewriter {
  /** Up to a few clean queries besides the original; empty when the model proposes nothing new. */
  rewrite(input: { query: string; recentMessages: readonly string[]; signal?: AbortSignal }): Promise<string[]>;
}

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

/** One episode before it is stored. */
export interface EpisodeDraft {
  /** Local calendar day (YYYY-MM-DD) in the zone it was built for. */
  day: string;
  startedAt: Date;
  endedAt: Date;
  /** Every message of the day, in conversation order. */
  messageIds: string[];
  summary: string;
  /** Messages whose sentences made the summary, most salient first. */
  summaryMessageIds: string[];
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
  /**
   * Conversations with messages past their exchange watermark, or with indexed lines not yet linked
   * to their entities (`linkedSeq` below `indexedSeq`: indexed before the graph existed), oldest
   * activity first.
   */
  owed(input: { limit: number }): Promise<{ userId: string; conversationId: string; indexedSeq: number; linkedSeq?: number }[]>;
  /**
   * The messages after `afterSeq` (at most `limit`), preceded by the last message at or before it
   * (a user line indexed alone is re-indexed with the reply that came later).
   */
  linesAfter(input: { userId: string; conversationId: string; afterSeq: number; limit: number }): Promise<StoredLine[]>;
  /** Moves the watermark forward to `seq` (never back); with the graph, the link watermark too. */
  advance(input: { userId: string; conversationId: string; seq: number }): Promise<void>;
  /** Moves the link watermark alone forward to `seq` (never back): lines linked, not embedded again. */
  advanceLinks?(input: { userId: string; conversationId: string; seq: number }): Promise<void>;
  /**
   * Links each line to the entities its text names (stored under the memory graph's canonical
   * keys); idempotent. Optional: an index without the graph over exchanges links nothing.
   */
  linkEntities?(input: { userId: string; conversationId: string; lines: readonly { messageId: string; at: Date; names: readonly string[] }[] }): Promise<number>;
  /**
   * The graph over exchanges, read per entity key: how many of the user's lines name it (counted
   * up to `countCap`) and up to `perKey` of those lines, each with every key it names — only for a
   * key named in at most `keysUpTo` lines (a hub's lines lead nowhere, so their keys are not read).
   * Keys no line names are left out.
   */
  entityLines?(input: { userId: string; keys: readonly string[]; perKey: number; countCap: number; keysUpTo: number }): Promise<EntityLines[]>;
}

/** One entity key of the graph over exchanges: its line count (capped) and some of its lines. */
export interface EntityLines {
  key: string;
  lines: number;
  found: (MessageRef & { keys: string[] })[];
}

// Conversations, reminders, notifications, digests, settings and users. Like the memory side,
// services are the only callers; the PostgreSQL adapters are built once in src/runtime.ts and the
// ones a transaction needs are also handed out by the {@link UnitOfWork}.
