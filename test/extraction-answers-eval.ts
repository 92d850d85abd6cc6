/**
 * Evaluation on the labelled set of answers to the assistant's questions
 * (test/fixtures/extraction-answers): each row is replayed as a two-turn conversation (the
 * assistant's question, the user's answer) through the offline rules and the provenance screen.
 * A row is predicted type T when an accepted user candidate of type T cites the user's message,
 * is global and clears the 0.7 ingestion bar; a positive row counts as found only when that
 * candidate's text also holds every `must` string (the question's predicate and the answer's value).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { jiebaSegmenter } from '../src/adapters/text/jieba';
import { planOfflineExtraction } from '../src/core/extraction/offline-extractor';
import { screenCandidates } from '../src/core/extraction/provenance';
import type { ConversationMessage, MemoryCandidate } from '../src/core/types';

export const ANSWER_LABELS = ['fact', 'preference', 'goal', 'pain_point'] as const;

export interface AnswerRow {
  id: string;
  lang: 'zh' | 'en';
  kind: string;
  label: (typeof ANSWER_LABELS)[number] | 'none';
  assistant: string;
  user: string;
  must: string[];
}

const DIR = fileURLToPath(new URL('./fixtures/extraction-answers/', import.meta.url));

export function loadAnswers(): AnswerRow[] {
  return readFileSync(`${DIR}answers.jsonl`, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as AnswerRow);
}

export function loadAnswerSplit(): { dev: Set<string>; heldOut: Set<string> } {
  const raw = JSON.parse(readFileSync(`${DIR}split.json`, 'utf8')) as { dev: string[]; 'held-out': string[] };
  return { dev: new Set(raw.dev), heldOut: new Set(raw['held-out']) };
}

const AT = new Date('2026-03-01T10:00:00Z');

export interface AnswerPrediction {
  row: AnswerRow;
  predicted: string;
  candidates: MemoryCandidate[];
}

function holds(c: MemoryCandidate, must: readonly string[]): boolean {
  const text = c.text.toLowerCase();
  return must.every((m) => m.split('|').some((alt) => text.includes(alt)));
}

export function predictAnswer(row: AnswerRow): AnswerPrediction {
  const messages: ConversationMessage[] = [
    { id: 'a1', role: 'assistant', content: row.assistant, at: AT },
    { id: 'u1', role: 'user', content: row.user, at: new Date(AT.getTime() + 30_000) },
  ];
  const plan = planOfflineExtraction(messages, { timezone: 'UTC', segmenter: jiebaSegmenter }, false);
  const { accepted } = screenCandidates(plan.candidates, messages, jiebaSegmenter, 'UTC');
  const durable = accepted.filter(
    (c) => c.role === 'user' && c.messageIds.includes('u1') && c.scope === 'global' && c.confidence >= 0.7 && (ANSWER_LABELS as readonly string[]).includes(c.type),
  );
  const right = durable.find((c) => c.type === row.label && holds(c, row.must));
  // A candidate of the right type without the question's predicate or the answer's value is not the fact.
  const predicted = right ? right.type : (durable.find((c) => c.type !== row.label)?.type ?? (durable.length > 0 ? 'incomplete' : 'none'));
  return { row, predicted, candidates: durable };
}

export interface TypeScore {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
}

export function scoreAnswers(predictions: readonly AnswerPrediction[]): { perType: Record<string, TypeScore>; noneKept: number; nones: number } {
  const perType: Record<string, TypeScore> = {};
  for (const label of ANSWER_LABELS) {
    const tp = predictions.filter((p) => p.row.label === label && p.predicted === label).length;
    const fp = predictions.filter((p) => p.row.label !== label && p.predicted === label).length;
    const fn = predictions.filter((p) => p.row.label === label && p.predicted !== label).length;
    perType[label] = { tp, fp, fn, precision: tp + fp === 0 ? 1 : tp / (tp + fp), recall: tp + fn === 0 ? 1 : tp / (tp + fn) };
  }
  const nones = predictions.filter((p) => p.row.label === 'none');
  return { perType, noneKept: nones.filter((p) => p.predicted === 'none').length, nones: nones.length };
}

export function formatAnswerScores(name: string, predictions: readonly AnswerPrediction[]): string {
  const { perType, noneKept, nones } = scoreAnswers(predictions);
  const lines = [`${name}: ${predictions.length} rows`, '| type | precision | recall | tp | fp | fn |', '|---|---|---|---|---|---|'];
  for (const [t, s] of Object.entries(perType)) lines.push(`| ${t} | ${s.precision.toFixed(2)} | ${s.recall.toFixed(2)} | ${s.tp} | ${s.fp} | ${s.fn} |`);
  lines.push(`| none kept none | ${noneKept}/${nones} | | | | |`);
  return lines.join('\n');
}
