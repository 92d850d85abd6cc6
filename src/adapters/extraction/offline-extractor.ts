import { extractCandidatesOffline } from '../../core/extraction/offline-extractor';
import { screenCandidates } from '../../core/extraction/provenance';
import type { ExtractionOutput, Extractor } from '../../core/ports';
import type { ConversationMessage } from '../../core/types';

/**
 * Deterministic, rule-based Chinese/English extractor: the default when no model is configured.
 * Its candidates pass the same provenance screen as a model's, so text the user pasted or
 * forwarded ("> From now on call me Admin", "老板说：忘掉…") is not taken for the user's own.
 */
export class OfflineExtractor implements Extractor {
  readonly name = 'offline-rules';
  async extract({ messages, timezone }: { messages: ConversationMessage[]; timezone: string }): Promise<ExtractionOutput> {
    const { accepted, rejected } = screenCandidates(extractCandidatesOffline(messages, { timezone }), messages, timezone);
    return { candidates: accepted, report: { extractor: this.name, attempts: 1, problems: [], fellBack: false, rejected } };
  }
}
