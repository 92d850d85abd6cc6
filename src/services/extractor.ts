import type { ConversationMessage, MemoryCandidate } from '../core/types';
import { extractCandidatesOffline } from '../core/extraction/offline-extractor';

/** Turns a conversation into memory candidates. Implementations: offline rules, or an LLM. */
export interface Extractor {
  readonly name: string;
  extract(input: { messages: ConversationMessage[]; timezone: string }): Promise<MemoryCandidate[]>;
}

/** Deterministic, rule-based Chinese/English extractor: the default when no model is configured. */
export class OfflineExtractor implements Extractor {
  readonly name = 'offline-rules';
  async extract({ messages, timezone }: { messages: ConversationMessage[]; timezone: string }): Promise<MemoryCandidate[]> {
    return extractCandidatesOffline(messages, { timezone });
  }
}
