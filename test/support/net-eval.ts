/**
 * Evaluation of the extraction recall net on the labelled bilingual statement set
 * (test/fixtures/extraction-net/statements.jsonl, split by family in split.json). Shared by the
 * bench (`npm run bench -- extract-net`) and the integration test, which both use the real e5
 * server. Each statement is replayed as a one-message conversation through the product code:
 *
 * - "rules": the offline rules alone (what the system did before the net);
 * - "net": the net alone, on every sentence (its own precision and recall as a classifier);
 * - "rules+net": the product path — rules first, the net only on what they left.
 *
 * A statement counts as predicted type T when a candidate of type T survives the provenance
 * screen, is global (a task-scoped request is not a durable memory) and clears the 0.7 bar that
 * ingestion applies; otherwise it is predicted "none".
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { jiebaSegmenter } from '../../src/adapters/text/jieba';
import { ExtractionNet, type NetThresholds, type StatementEncoder } from '../../src/core/extraction/net';
import { selectNetStatements } from '../../src/core/extraction/net-statements';
import { planOfflineExtraction } from '../../src/core/extraction/offline-extractor';
import { screenCandidates } from '../../src/core/extraction/provenance';
import { detectLang, prepareText } from '../../src/core/extraction/text';
import type { ConversationMessage, MemoryCandidate } from '../../src/core/types';

export const NET_LABELS = ['fact', 'preference', 'goal', 'pain_point', 'instruction'] as const;
export type NetLabel = (typeof NET_LABELS)[number] | 'none';

export interface LabelledStatement {
  text: string;
  lang: 'zh' | 'en';
  label: NetLabel;
  family: string;
  kind: string;
}

const FIXTURES = fileURLToPath(new URL('../fixtures/extraction-net/', import.meta.url));

export function loadStatements(): LabelledStatement[] {
  return readFileSync(`${FIXTURES}statements.jsonl`, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as LabelledStatement);
}

export interface Split {
  seed: number;
  tune: Set<string>;
  holdout: Set<string>;
}

export function loadSplit(): Split {
  const raw = JSON.parse(readFileSync(`${FIXTURES}split.json`, 'utf8')) as { seed: number; tune: string[]; holdout: string[] };
  return { seed: raw.seed, tune: new Set(raw.tune), holdout: new Set(raw.holdout) };
}

/** Remembers vectors by text, so threshold sweeps and repeated modes embed each text once. */
export class CachingEncoder implements StatementEncoder {
  private readonly cache = new Map<string, number[]>();
  calls = 0;

  constructor(private readonly inner: StatementEncoder) {}

  async encode(texts: readonly string[]): Promise<number[][]> {
    const missing = [...new Set(texts.filter((t) => !this.cache.has(t)))];
    if (missing.length > 0) {
      this.calls++;
      const vectors = await this.inner.encode(missing);
      missing.forEach((t, i) => this.cache.set(t, vectors[i]!));
    }
    return texts.map((t) => this.cache.get(t)!);
  }
}

export type Mode = 'rules' | 'net' | 'rules+net';

export interface Prediction {
  row: LabelledStatement;
  predicted: string;
  candidate?: MemoryCandidate;
}

const AT = new Date('2026-03-01T10:00:00Z');

function durable(candidates: readonly MemoryCandidate[], message: ConversationMessage): MemoryCandidate | undefined {
  const { accepted } = screenCandidates(candidates, [message], jiebaSegmenter, 'UTC');
  // Dated events and decisions are outside this set (it is about durable statements); the rules
  // keep producing them, and they are not counted either way.
  return accepted.find((c) => c.role === 'user' && c.intent !== 'forget' && c.scope === 'global' && c.confidence >= 0.7 && (NET_LABELS as readonly string[]).includes(c.type));
}

/** Predictions for `rows` in one mode. */
export async function predict(rows: readonly LabelledStatement[], encoder: StatementEncoder, mode: Mode, thresholds?: NetThresholds): Promise<Prediction[]> {
  const net = new ExtractionNet(encoder, { thresholds });
  const out: Prediction[] = [];
  for (const row of rows) {
    const message: ConversationMessage = { id: 'm1', role: 'user', content: row.text, at: AT } as ConversationMessage;
    let candidates: MemoryCandidate[] = [];
    if (mode === 'net') {
      const content = prepareText(row.text).trim();
      const statements = selectNetStatements(message, content, detectLang(content), [], jiebaSegmenter);
      candidates = await net.candidates(statements, 'UTC', jiebaSegmenter);
    } else {
      const plan = planOfflineExtraction([message], { timezone: 'UTC', segmenter: jiebaSegmenter });
      candidates = plan.candidates;
      if (mode === 'rules+net') candidates = [...candidates, ...(await net.candidates(plan.statements, 'UTC', jiebaSegmenter))];
    }
    const chosen = durable(candidates, message);
    out.push({ row, predicted: chosen?.type ?? 'none', candidate: chosen });
  }
  return out;
}

export interface Score {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
  f1: number;
  support: number;
}

function score(tp: number, fp: number, fn: number): Score {
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { tp, fp, fn, precision, recall, f1, support: tp + fn };
}

export interface Metrics {
  perType: Record<(typeof NET_LABELS)[number], Score>;
  /** Any durable type vs none: did a memory come out at all when one should (and not when none should)? */
  durable: Score;
  /** Accuracy on the "none" rows (statements that must not become memories). */
  noneKept: number;
  n: number;
}

export function metrics(predictions: readonly Prediction[]): Metrics {
  const perType = {} as Metrics['perType'];
  for (const label of NET_LABELS) {
    const tp = predictions.filter((p) => p.row.label === label && p.predicted === label).length;
    const fp = predictions.filter((p) => p.row.label !== label && p.predicted === label).length;
    const fn = predictions.filter((p) => p.row.label === label && p.predicted !== label).length;
    perType[label] = score(tp, fp, fn);
  }
  const pos = (p: Prediction) => p.row.label !== 'none';
  const hit = (p: Prediction) => p.predicted !== 'none';
  const durableScore = score(predictions.filter((p) => pos(p) && hit(p)).length, predictions.filter((p) => !pos(p) && hit(p)).length, predictions.filter((p) => pos(p) && !hit(p)).length);
  const nones = predictions.filter((p) => !pos(p));
  return { perType, durable: durableScore, noneKept: nones.length === 0 ? 1 : nones.filter((p) => !hit(p)).length / nones.length, n: predictions.length };
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

/** A Markdown table: precision / recall (support) per type and for "any durable type", per mode. */
export function formatTable(results: { mode: Mode; metrics: Metrics }[]): string {
  const header = `| type | ${results.map((r) => `${r.mode} P | ${r.mode} R`).join(' | ')} | support |`;
  const rule = `|---|${results.map(() => '---:|---:').join('|')}|---:|`;
  const rows = NET_LABELS.map((label) => {
    const cells = results.map((r) => `${pct(r.metrics.perType[label].precision)} | ${pct(r.metrics.perType[label].recall)}`).join(' | ');
    return `| ${label} | ${cells} | ${results[0]!.metrics.perType[label].support} |`;
  });
  const any = `| any durable type | ${results.map((r) => `${pct(r.metrics.durable.precision)} | ${pct(r.metrics.durable.recall)}`).join(' | ')} | ${results[0]!.metrics.durable.support} |`;
  const none = `| "none" rows kept out | ${results.map((r) => `${pct(r.metrics.noneKept)} | `).join(' | ')} | ${results[0]!.metrics.n - results[0]!.metrics.durable.support} |`;
  return [header, rule, ...rows, any, none].join('\n');
}
