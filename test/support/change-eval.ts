/**
 * The change-statement set (test/fixtures/change-statements): single user messages that say a
 * state of the user is new, ended, taken up again or (for a health problem) over, beside
 * look-alikes that must not become such a memory (plans, wishes, questions, other people,
 * hypotheticals, small talk). Split by family before any rule was changed (split.json).
 *
 * Each line is replayed as a one-message conversation through the product path: the rules, then
 * the net on what they left (when an encoder is given), the provenance screen and the 0.7 bar.
 */
import { fileURLToPath } from 'node:url';
import { readJsonl } from './jsonl';
import { keptCandidates } from './guard-eval';
import type { StatementEncoder } from '../../src/core/extraction/net';
import type { MemoryCandidate } from '../../src/core/types';

export type ChangeExpect = 'state' | 'resolve' | 'no-change' | 'none' | 'not-user';
export interface ChangeLine {
  text: string;
  lang: 'zh' | 'en';
  label: string;
  family: string;
  expect: ChangeExpect;
  /** For other people's lines: the word naming the other person, as written. */
  other?: string;
}
export interface ChangeVerdict {
  line: ChangeLine;
  pass: boolean;
  kept: Pick<MemoryCandidate, 'type' | 'intent' | 'text'>[];
}

const STATE = new Set(['fact', 'preference']);

export function loadChangeSplit(split: 'tune' | 'holdout'): ChangeLine[] {
  return readJsonl<ChangeLine>(fileURLToPath(new URL(`../fixtures/change-statements/${split}.jsonl`, import.meta.url)));
}

export function judgeChangeLine(line: ChangeLine, kept: readonly MemoryCandidate[]): ChangeVerdict {
  const changes = kept.some((c) => c.intent === 'update' || c.intent === 'resolve');
  const other = (line.other ?? '').toLowerCase();
  const pass = {
    state: kept.some((c) => STATE.has(c.type) && c.scope === 'global'),
    resolve: kept.some((c) => c.intent === 'resolve'),
    'no-change': !changes && !kept.some((c) => STATE.has(c.type)),
    none: kept.length === 0,
    'not-user': !changes && kept.every((c) => c.text.toLowerCase().includes(other)),
  }[line.expect];
  return { line, pass, kept: kept.map((c) => ({ type: c.type, intent: c.intent, text: c.text })) };
}

export async function judgeChangeSplit(split: 'tune' | 'holdout', encoder?: StatementEncoder): Promise<ChangeVerdict[]> {
  const out: ChangeVerdict[] = [];
  for (const line of loadChangeSplit(split)) {
    const kept = await keptCandidates({ ...line, kind: line.label, expect: 'none' }, encoder);
    out.push(judgeChangeLine(line, kept));
  }
  return out;
}

/** Pass counts by label, the positives (a state or a resolution expected) and the look-alikes, and overall. */
export function changeTable(verdicts: readonly ChangeVerdict[]): { label: string; passed: number; total: number }[] {
  const count = (label: string, of: readonly ChangeVerdict[]) => ({ label, passed: of.filter((v) => v.pass).length, total: of.length });
  const labels = [...new Set(verdicts.map((v) => v.line.label))];
  const positive = (v: ChangeVerdict) => v.line.expect === 'state' || v.line.expect === 'resolve';
  return [
    ...labels.map((label) => count(label, verdicts.filter((v) => v.line.label === label))),
    count('changes (positives)', verdicts.filter(positive)),
    count('look-alikes', verdicts.filter((v) => !positive(v))),
    count('all', verdicts),
  ];
}
