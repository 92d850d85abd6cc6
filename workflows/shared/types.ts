import type { AppliedDecision } from '../../src/core/dto';
import type { MemoryType, MemoryVia } from '../../src/core/types';

export interface StoreMemoryInput {
  userId: string;
  requestId: string;
  text: string;
  type: MemoryType;
  scope?: 'global' | 'task';
  confidence?: number;
  importance?: number;
  keywords?: string[];
  metadata?: Record<string, unknown>;
  expiresAt?: string;
  /** When it was said (ISO); defaults to the request time. */
  at: string;
  /** Who wrote it directly: a chat app with the tenant key (`api`, the default) or an agent over MCP. */
  via?: Exclude<MemoryVia, 'extraction'>;
}

export interface ConversationInput {
  userId: string;
  conversationId: string;
  /** Keyed reference to the conversation id, used in workflow ids and search attributes. */
  conversationRef?: string;
  idleSeconds: number;
}

export interface MessagesAddedInput {
  count: number;
}

export interface ExtractMemoriesInput {
  userId: string;
  conversationId: string;
}

export interface ExtractionResult {
  userId: string;
  conversationId: string;
  messagesProcessed: number;
  decisions: AppliedDecision[];
  counts: Record<AppliedDecision['action'], number>;
  /** The conversation's extraction watermark after the run (runs with watermarks only). */
  watermark?: number;
  /** Passes over the conversation: more than one when messages arrived while the run went on. */
  passes?: number;
}

export interface ConversationOutcome {
  /** `already-extracting`: only runs from before follow-up runs (they dropped what came after). */
  outcome: 'ended-by-call' | 'idle-extracted' | 'already-extracting';
  /** The last extraction this workflow ran. */
  extraction?: ExtractionResult;
  /** Extractions this workflow ran: more than one when messages arrived while one was running. */
  extractions?: number;
}
