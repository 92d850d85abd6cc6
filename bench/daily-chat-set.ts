import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The project's own bilingual daily-chat set (test/fixtures/daily-chat, format in its README):
 * reading it, checking it, and the answer check the benchmark applies. Kept apart from the bench
 * so the unit test that guards the fixture does not load the server.
 */
export const DAILY_CHAT_DIR = fileURLToPath(new URL('../test/fixtures/daily-chat/', import.meta.url));

export const KINDS = ['single-hop', 'temporal', 'updated-fact', 'multi-hop', 'vague'] as const;
export type Kind = (typeof KINDS)[number];
export const SPLITS = ['dev', 'held-out'] as const;
export type Split = (typeof SPLITS)[number];
export type Lang = 'zh' | 'en';

export interface DailyTurn {
  id: string;
  role: 'user' | 'assistant';
  text: string;
}
export interface DailySession {
  user: string;
  lang: Lang;
  split: Split;
  session: string;
  /** ISO 8601 with the user's own UTC offset, so "last Wednesday" means the user's Wednesday. */
  at: string;
  turns: DailyTurn[];
}
export interface DailyQuestion {
  id: string;
  user: string;
  lang: Lang;
  split: Split;
  kind: Kind;
  question: string;
  /** Turn ids of the same user; all of them are needed to answer. */
  evidence: string[];
  /** Words that must all appear (normalised) in a context that answers the question. */
  answer: string[];
  /** When the question is asked: the reference for "last Tuesday", "上周三". */
  asked: string;
}
export interface DailyUser {
  user: string;
  lang: Lang;
  split: Split;
  sessions: DailySession[];
  questions: DailyQuestion[];
}

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l) as T;
      } catch (err) {
        throw new Error(`${path}:${i + 1}: ${(err as Error).message}`);
      }
    });
}

/** Users in the order they first appear in sessions.jsonl, each with its sessions and questions. */
export function loadDailyChat(dir = DAILY_CHAT_DIR): DailyUser[] {
  const sessions = readJsonl<DailySession>(`${dir}/sessions.jsonl`);
  const questions = readJsonl<DailyQuestion>(`${dir}/questions.jsonl`);
  const users = new Map<string, DailyUser>();
  for (const s of sessions) {
    const u = users.get(s.user) ?? { user: s.user, lang: s.lang, split: s.split, sessions: [], questions: [] };
    u.sessions.push(s);
    users.set(s.user, u);
  }
  for (const q of questions) {
    const u = users.get(q.user);
    if (!u) throw new Error(`question ${q.id} names user ${q.user}, who has no sessions`);
    u.questions.push(q);
  }
  return [...users.values()];
}

/** Lower case, letters and digits only, single spaces (as the LoCoMo bench normalises). */
export function normaliseText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Every answer word, normalised, appears in the normalised text. */
export function answersIn(text: string, answer: readonly string[]): boolean {
  const t = normaliseText(text);
  return answer.every((a) => t.includes(normaliseText(a)));
}

/** What is wrong with the set, one line per problem; empty when it is well formed. */
export function checkDailyChat(users: DailyUser[]): string[] {
  const problems: string[] = [];
  const questionIds = new Set<string>();
  for (const u of users) {
    if (!SPLITS.includes(u.split)) problems.push(`${u.user}: split "${u.split}" is not one of ${SPLITS.join(', ')}`);
    if (u.lang !== 'zh' && u.lang !== 'en') problems.push(`${u.user}: lang "${u.lang}"`);
    const turnText = new Map<string, string>();
    let lastAt = -Infinity;
    const days = new Set<string>();
    for (const s of u.sessions) {
      if (s.split !== u.split || s.lang !== u.lang) problems.push(`${u.user} ${s.session}: split or lang differs from the user's other sessions`);
      const at = Date.parse(s.at);
      if (!Number.isFinite(at) || !/[+-]\d{2}:\d{2}$|Z$/u.test(s.at)) problems.push(`${u.user} ${s.session}: "at" ${s.at} is not an ISO time with an offset`);
      if (at <= lastAt) problems.push(`${u.user} ${s.session}: sessions are not in time order`);
      lastAt = at;
      days.add(s.at.slice(0, 10));
      if (s.turns.length < 6 || s.turns.length > 20) problems.push(`${u.user} ${s.session}: ${s.turns.length} turns (6–20 expected)`);
      for (const t of s.turns) {
        if (turnText.has(t.id)) problems.push(`${u.user}: turn id ${t.id} twice`);
        if (!/^[\w.@-]+$/u.test(t.id)) problems.push(`${u.user}: turn id ${t.id} is not a valid message id`);
        if (t.role !== 'user' && t.role !== 'assistant') problems.push(`${u.user} ${t.id}: role ${t.role}`);
        if (t.text.trim() === '') problems.push(`${u.user} ${t.id}: empty text`);
        turnText.set(t.id, t.text);
      }
    }
    if (days.size < 10) problems.push(`${u.user}: ${days.size} days of chat (10 or more expected)`);
    if (u.questions.length < 15 || u.questions.length > 25) problems.push(`${u.user}: ${u.questions.length} questions (15–25 expected)`);
    for (const q of u.questions) {
      if (questionIds.has(q.id)) problems.push(`question id ${q.id} twice`);
      questionIds.add(q.id);
      if (!KINDS.includes(q.kind)) problems.push(`${q.id}: kind "${q.kind}" is not one of ${KINDS.join(', ')}`);
      if (q.split !== u.split || q.lang !== u.lang) problems.push(`${q.id}: split or lang differs from its user's`);
      if (q.question.trim() === '') problems.push(`${q.id}: no question`);
      if (!Number.isFinite(Date.parse(q.asked)) || Date.parse(q.asked) <= lastAt) problems.push(`${q.id}: asked ${q.asked} is not after the last session`);
      if (q.evidence.length === 0) problems.push(`${q.id}: no evidence`);
      if (q.answer.length === 0 || q.answer.some((a) => normaliseText(a) === '')) problems.push(`${q.id}: no answer words`);
      const missing = q.evidence.filter((e) => !turnText.has(e));
      if (missing.length > 0) problems.push(`${q.id}: evidence ${missing.join(', ')} not among ${u.user}'s turns`);
      // The answer must be recoverable from the labelled evidence, or the label is wrong.
      else if (!answersIn(q.evidence.map((e) => turnText.get(e)!).join('\n'), q.answer)) problems.push(`${q.id}: answer ${q.answer.join(', ')} not in its evidence turns`);
      if (q.kind === 'multi-hop' && q.evidence.length < 2) problems.push(`${q.id}: multi-hop with one evidence turn`);
    }
  }
  for (const split of SPLITS) {
    const langs = users.filter((u) => u.split === split).map((u) => u.lang);
    const zh = langs.filter((l) => l === 'zh').length;
    if (zh === 0 || zh !== langs.length - zh) problems.push(`split ${split}: ${zh} zh and ${langs.length - zh} en users (balanced expected)`);
  }
  return problems;
}
