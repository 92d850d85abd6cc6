import type { MemoryType, MemoryVia } from '../../src/core/types';

export interface StoreMemoryInput {
  userId: string;
  requestId: string;
  text: string;
  /** Absent: the extractor infers type, scope, importance and keywords from the text (src/memory/memory-inference.ts). */
  type?: MemoryType;
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

// The conversation capability's inputs and results live in its contract; named here too for the other workflows.
export type { ConversationInput, ConversationOutcome, ExtractionResult, ExtractMemoriesInput, MessagesAddedInput } from '../../src/conversation/contract';
