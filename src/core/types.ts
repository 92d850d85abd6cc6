/**
 * Domain types shared by the pure core, the adapters, the activities and the workflows.
 * Kept free of I/O imports so workflow code may import them.
 */
import type { MemoryType } from './memory-types';

/** The memory types and all that differs by type: src/core/memory-types.ts. */
export { MEMORY_TYPES, type MemoryType } from './memory-types';

/**
 * How a memory arrived: extracted from the user's own words in a conversation, or written directly
 * by a chat app with the tenant key (`api`) or by an agent's `memory_add` over MCP (`mcp`). What it
 * means for trust is in src/core/memory/via.ts.
 */
export const MemoryVia = {
  extraction: 'extraction',
  api: 'api',
  mcp: 'mcp',
} as const;
export type MemoryVia = (typeof MemoryVia)[keyof typeof MemoryVia];
/** Every value: the migration's CHECKs on memories.via and memory_events.via are tested against it. */
export const MEMORY_VIAS = Object.values(MemoryVia) as [MemoryVia, ...MemoryVia[]];

export const MemoryStatus = {
  active: 'active',
  superseded: 'superseded',
  expired: 'expired',
  archived: 'archived',
} as const;
export type MemoryStatus = (typeof MemoryStatus)[keyof typeof MemoryStatus];
export const MEMORY_STATUSES = Object.values(MemoryStatus) as [MemoryStatus, ...MemoryStatus[]];

export const MemoryScope = { global: 'global', task: 'task' } as const;
export type MemoryScope = (typeof MemoryScope)[keyof typeof MemoryScope];

export const ImportanceLevel = { low: 'low', medium: 'medium', high: 'high', critical: 'critical' } as const;
export type ImportanceLevel = (typeof ImportanceLevel)[keyof typeof ImportanceLevel];

export const MessageRole = { user: 'user', assistant: 'assistant' } as const;
export type MessageRole = (typeof MessageRole)[keyof typeof MessageRole];

export interface MemorySource {
  conversationId?: string;
  messageIds?: string[];
  /** Who said it: the user, or the assistant (recommendations, advice). */
  role?: MessageRole;
  /** How the memory arrived (kept for older readers; the `via` column of the memory is the record). */
  via?: MemoryVia;
}

export interface Memory {
  id: string;
  userId: string;
  text: string;
  type: MemoryType;
  status: MemoryStatus;
  scope: MemoryScope;
  confidence: number;
  importance: number;
  importanceLevel: ImportanceLevel;
  frequencyCount: number;
  decayScore: number;
  emotionTags: string[];
  associatedTopics: string[];
  keywords: string[];
  source: MemorySource;
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  lastRecalledAt: Date | null;
  lastAccessedAt: Date;
  expiresAt: Date | null;
  supersedes: string | null;
  supersededBy: string | null;
  /** How it arrived: extracted from the user's words, or written directly (API, MCP). */
  via: MemoryVia;
  /** A directly written instruction the user has not confirmed: never injected as a standing instruction. */
  pending: boolean;
}

export interface ConversationMessage {
  id: string;
  role: MessageRole;
  content: string;
  /** When it was said; the memory's time is this, not the processing time. */
  at: Date;
}

export interface EntityRef {
  name: string;
  kind: string;
}

export interface RelationRef {
  source: string;
  relation: string;
  target: string;
}

/** One memory proposed by an extractor, before any decision against existing memories. */
export interface MemoryCandidate {
  text: string;
  type: MemoryType;
  confidence: number;
  importance: number;
  keywords: string[];
  entities: EntityRef[];
  relations: RelationRef[];
  scope: MemoryScope;
  expiresAt?: Date;
  emotionTags: string[];
  /** Ids of the messages the candidate came from (provenance). */
  messageIds: string[];
  /** Who said it. */
  role: MessageRole;
  /** When the source message was said. */
  saidAt: Date;
  /**
   * What the candidate does to existing memories: a plain statement, an update/negation of an
   * earlier one ("我现在可以吃花生了"), or a request to forget ("忘掉我的…").
   */
  /** `resolve`: the user says a problem is over ("打印机修好了", "it works again"); the matching open pain point is superseded. */
  intent: 'assert' | 'update' | 'forget' | 'resolve';
  /** For update/forget: the words that identify the memory being changed ("花生", "vegetarian"). */
  subject?: string;
}
