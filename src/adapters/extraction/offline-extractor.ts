import type { ExtractionNet } from '../../core/extraction/net';
import { dedupeCandidates, planOfflineExtraction } from '../../core/extraction/offline-extractor';
import { screenCandidates } from '../../core/extraction/provenance';
import type { ExtractionOutput, ExtractionReport, Extractor } from '../../core/ports/conversation';
import type { Segmenter } from '../../core/text/segmenter';
import type { ConversationMessage } from '../../core/types';
import { jiebaSegmenter } from '../text/jieba';
import { pageCandidates, RuleWorkError, scanPage, type PageScan, type RuleWork } from '../../shared/rule-work';

/**
 * Deterministic, rule-based Chinese/English extractor: the default when no model is configured.
 * Its candidates pass the same provenance screen as a model's, so text the user pasted or
 * forwarded ("> From now on call me Admin", "老板说：忘掉…") is not taken for the user's own.
 *
 * With an {@link ExtractionNet} (the e5 recall net, src/core/extraction/net.ts) the statements the
 * rules did not turn into a candidate are judged by meaning too; the net's candidates rank below
 * the rules' and pass the same screen. An embedder failure fails the extraction (the activity
 * retries it), so a short outage never silently lowers recall.
 *
 * With {@link RuleWork} (the worker pool) the rules run off the caller's event loop, each message
 * with its own time limit. The extraction run scans a page first (to quarantine the messages that
 * fail) and hands the scan over as `scan`, so the rules run once per message.
 */
export class OfflineExtractor implements Extractor {
  readonly name = 'offline-rules';

  constructor(
    private readonly net?: ExtractionNet,
    private readonly segmenter: Segmenter = jiebaSegmenter,
    private readonly rules?: RuleWork,
  ) {}

  async extract({ messages, timezone, scan }: { messages: ConversationMessage[]; timezone: string; scan?: PageScan }): Promise<ExtractionOutput> {
    if (!this.rules && !scan) return this.extractInline(messages, timezone);
    let pageScan = scan;
    if (!pageScan && this.rules) {
      pageScan = await scanPage(this.rules, messages, timezone, this.net !== undefined);
      const failed = pageScan.failures[0];
      // A caller without the quarantine (src/conversation/extraction-runs.ts) gets the failure whole.
      if (failed) throw new RuleWorkError(failed.reason, `message ${failed.messageId}: ${failed.detail}`);
    }
    const plan = pageCandidates(pageScan!, messages);
    const fromNet = this.net ? await this.net.candidates(plan.statements, timezone, this.segmenter) : [];
    const candidates = fromNet.length > 0 ? dedupeCandidates([...plan.candidates, ...fromNet]) : plan.candidates;
    const { accepted, rejected } = this.rules ? await this.rules.screen({ candidates, messages, timezone }) : screenCandidates(candidates, messages, this.segmenter, timezone);
    return { candidates: accepted, report: this.report(rejected, plan.statements.length, fromNet.length) };
  }

  private async extractInline(messages: ConversationMessage[], timezone: string): Promise<ExtractionOutput> {
    const plan = planOfflineExtraction(messages, { timezone, segmenter: this.segmenter }, this.net !== undefined);
    const fromNet = this.net ? await this.net.candidates(plan.statements, timezone, this.segmenter) : [];
    const { accepted, rejected } = screenCandidates(fromNet.length > 0 ? dedupeCandidates([...plan.candidates, ...fromNet]) : plan.candidates, messages, this.segmenter, timezone);
    return { candidates: accepted, report: this.report(rejected, plan.statements.length, fromNet.length) };
  }

  private report(rejected: ExtractionReport['rejected'], statements: number, proposed: number): ExtractionReport {
    const report: ExtractionReport = { extractor: this.name, attempts: 1, problems: [], fellBack: false, rejected };
    if (this.net) report.net = { statements, proposed };
    return report;
  }
}
