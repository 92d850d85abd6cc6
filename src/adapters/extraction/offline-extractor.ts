import type { ExtractionNet } from '../../core/extraction/net';
import { dedupeCandidates, planOfflineExtraction } from '../../core/extraction/offline-extractor';
import { screenCandidates } from '../../core/extraction/provenance';
import type { ExtractionOutput, ExtractionReport, Extractor } from '../../core/ports';
import type { Segmenter } from '../../core/text/segmenter';
import type { ConversationMessage } from '../../core/types';
import { jiebaSegmenter } from '../text/jieba';

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

  constructor(
    private readonly net?: ExtractionNet,
    private readonly segmenter: Segmenter = jiebaSegmenter,
  ) {}

  async extract({ messages, timezone }: { messages: ConversationMessage[]; timezone: string }): Promise<ExtractionOutput> {
    const plan = planOfflineExtraction(messages, { timezone, segmenter: this.segmenter }, this.net !== undefined);
    const fromNet = this.net ? await this.net.candidates(plan.statements, timezone, this.segmenter) : [];
    const { accepted, rejected } = screenCandidates(fromNet.length > 0 ? dedupeCandidates([...plan.candidates, ...fromNet]) : plan.candidates, messages, this.segmenter, timezone);
    const report: ExtractionReport = { extractor: this.name, attempts: 1, problems: [], fellBack: false, rejected };
    if (this.net) report.net = { statements: plan.statements.length, proposed: fromNet.length };
    return { candidates: accepted, report };
  }
}
