/**
 * The guard set (test/fixtures/extraction-guards): single user messages that must not become the
 * user's memories (hypotheticals, other people's facts, complaints read as instructions) beside
 * near neighbours that must (conditional facts, conditional and standing instructions, the
 * user's own facts that name someone else). Written by someone who had not read the rules, split
 * by family before any rule was changed (split.json).
 *
 * Each line is replayed as a one-message conversation through the product path: the rules, then
 * the net on what they left (when an encoder is given), the provenance screen and the 0.7 bar.
 */
import { fileURLToPath } from 'node:url';
import { readJsonl } from './jsonl';
import { jiebaSegmenter } from '../../src/adapters/text/jieba';
import { ExtractionNet, type StatementEncoder } from '../../src/core/extraction/net';
import { planOfflineExtraction } from '../../src/core/extraction/offline-extractor';
import { screenCandidates } from '../../src/core/extraction/provenance';
import type { ConversationMessage, MemoryCandidate } from '../../src/core/types';

export type GuardExpect = 'none' | 'durable' | 'instruction' | 'not-instruction' | 'not-user';
export interface GuardLine {
  text: string;
  lang: 'zh' | 'en';
  kind: string;
  family: string;
  expect: GuardExpect;
  /** For third-party lines: the word naming the other person, as written. */
  other?: string;
}
export interface GuardVerdict {
  line: GuardLine;
  pass: boolean;
  kept: Pick<MemoryCandidate, 'type' | 'text'>[];
}

const DURABLE = new Set(['fact', 'preference', 'pain_point', 'goal']);
const AT = new Date('2026-03-02T10:00:00+08:00');
const ZONE = 'Asia/Shanghai';

export function loadGuardSplit(split: 'tune' | 'holdout'): GuardLine[] {
  const path = fileURLToPath(new URL(`../fixtures/extraction-guards/${split}.jsonl`, import.meta.url));
  return readJsonl<GuardLine>(path);
}

const nets = new WeakMap<StatementEncoder, ExtractionNet>();

/** One net per encoder: its exemplar index is built once, not for every line. */
function netFor(encoder: StatementEncoder): ExtractionNet {
  let net = nets.get(encoder);
  if (!net) nets.set(encoder, (net = new ExtractionNet(encoder)));
  return net;
}

/** What ingestion would keep of one line: the rules' candidates and, with an encoder, the net's. */
export async function keptCandidates(line: GuardLine, encoder?: StatementEncoder): Promise<MemoryCandidate[]> {
  const message = { id: 'm1', role: 'user', content: line.text, at: AT } as ConversationMessage;
  const plan = planOfflineExtraction([message], { timezone: ZONE, segmenter: jiebaSegmenter });
  const fromNet = encoder ? await netFor(encoder).candidates(plan.statements, ZONE, jiebaSegmenter) : [];
  const { accepted } = screenCandidates([...plan.candidates, ...fromNet], [message], jiebaSegmenter, ZONE);
  return accepted.filter((c) => c.role === 'user' && c.intent !== 'forget' && c.confidence >= 0.7);
}

export function judgeGuardLine(line: GuardLine, kept: readonly MemoryCandidate[]): GuardVerdict {
  const types = kept.map((c) => c.type);
  const other = (line.other ?? '').toLowerCase();
  const pass = {
    none: kept.length === 0,
    durable: types.some((t) => DURABLE.has(t)),
    instruction: types.includes('instruction'),
    'not-instruction': !types.includes('instruction'),
    // Kept only as the other person's: their word stays in the text and no relation makes it the user's.
    'not-user': kept.every((c) => c.text.toLowerCase().includes(other) && !c.relations.some((r) => r.source === 'user' && r.target.toLowerCase().includes(other) && r.relation !== 'has_family')),
  }[line.expect];
  return { line, pass, kept: kept.map((c) => ({ type: c.type, text: c.text })) };
}

export async function judgeGuardSplit(split: 'tune' | 'holdout', encoder?: StatementEncoder): Promise<GuardVerdict[]> {
  const out: GuardVerdict[] = [];
  for (const line of loadGuardSplit(split)) out.push(judgeGuardLine(line, await keptCandidates(line, encoder)));
  return out;
}

/** Pass counts by kind and overall. */
export function guardTable(verdicts: readonly GuardVerdict[]): { kind: string; passed: number; total: number }[] {
  const kinds = [...new Set(verdicts.map((v) => v.line.kind))].sort();
  const rows = kinds.map((kind) => {
    const of = verdicts.filter((v) => v.line.kind === kind);
    return { kind, passed: of.filter((v) => v.pass).length, total: of.length };
  });
  rows.push({ kind: 'all', passed: verdicts.filter((v) => v.pass).length, total: verdicts.length });
  return rows;
}
