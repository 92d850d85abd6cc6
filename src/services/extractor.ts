import type { ConversationMessage, MemoryCandidate } from '../core/types';
import { extractCandidatesOffline } from '../core/extraction/offline-extractor';

/** How an extraction went: which extractor, and every problem with a model's output. */
export interface ExtractionReport {
  extractor: string;
  attempts: number;
  problems: string[];
  /** The model's output stayed unusable and the offline rules decided instead. */
  fellBack: boolean;
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

/** Deterministic, rule-based Chinese/English extractor: the default when no model is configured. */
export class OfflineExtractor implements Extractor {
  readonly name = 'offline-rules';
  async extract({ messages, timezone }: { messages: ConversationMessage[]; timezone: string }): Promise<ExtractionOutput> {
    return { candidates: extractCandidatesOffline(messages, { timezone }), report: { extractor: this.name, attempts: 1, problems: [], fellBack: false } };
  }
}
