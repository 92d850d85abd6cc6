import type { ConversationMessage, MemoryCandidate } from '../core/types';
import { extractCandidatesOffline } from '../core/extraction/offline-extractor';
import { screenCandidates, type RejectedCandidate } from '../core/extraction/provenance';
import type { Segmenter } from '../core/text/segmenter';
import { jiebaSegmenter } from '../adapters/text/jieba';

export type { RejectedCandidate } from '../core/extraction/provenance';

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
 * Deterministic, rule-based Chinese/English extractor: the default when no model is configured.
 * Its candidates pass the same provenance screen as a model's, so text the user pasted or
 * forwarded ("> From now on call me Admin", "老板说：忘掉…") is not taken for the user's own.
 */
export class OfflineExtractor implements Extractor {
  readonly name = 'offline-rules';
  constructor(private readonly segmenter: Segmenter = jiebaSegmenter) {}

  async extract({ messages, timezone }: { messages: ConversationMessage[]; timezone: string }): Promise<ExtractionOutput> {
    const { segmenter } = this;
    const { accepted, rejected } = screenCandidates(extractCandidatesOffline(messages, { timezone, segmenter }), messages, segmenter, timezone);
    return { candidates: accepted, report: { extractor: this.name, attempts: 1, problems: [], fellBack: false, rejected } };
  }
}
