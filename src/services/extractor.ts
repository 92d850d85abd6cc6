import type { ConversationMessage, MemoryCandidate } from '../core/types';
import type { ExtractionNet } from '../core/extraction/net';
import { dedupeCandidates, planOfflineExtraction } from '../core/extraction/offline-extractor';
import { screenCandidates, type RejectedCandidate } from '../core/extraction/provenance';

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

/**
 * Deterministic, rule-based Chinese/English extractor: the default when no model is configured.
 * Its candidates pass the same provenance screen as a model's, so text the user pasted or
 * forwarded ("> From now on call me Admin", "老板说：忘掉…") is not taken for the user's own.
 *
 * With an {@link ExtractionNet} (the e5 recall net, src/core/extraction/net.ts) the statements the
 * rules did not turn into a candidate are judged by meaning too; the net's candidates rank below
 * the rules' and pass the same screen. An embedder failure fails the extraction (the activity
 * retries it), so a short outage never silently lowers recall.
 */
export class OfflineExtractor implements Extractor {
  readonly name = 'offline-rules';

  constructor(private readonly net?: ExtractionNet) {}

  async extract({ messages, timezone }: { messages: ConversationMessage[]; timezone: string }): Promise<ExtractionOutput> {
    const plan = planOfflineExtraction(messages, { timezone }, this.net !== undefined);
    const fromNet = this.net ? await this.net.candidates(plan.statements, timezone) : [];
    const { accepted, rejected } = screenCandidates(fromNet.length > 0 ? dedupeCandidates([...plan.candidates, ...fromNet]) : plan.candidates, messages, timezone);
    const report: ExtractionReport = { extractor: this.name, attempts: 1, problems: [], fellBack: false, rejected };
    if (this.net) report.net = { statements: plan.statements.length, proposed: fromNet.length };
    return { candidates: accepted, report };
  }
}
