/**
 * Episodes: each conversation, cut at local midnight, becomes one episode per day with an
 * extractive summary — the sentences that carry named things, places, numbers and the assistant's
 * concrete suggestions, in the order they were said. No model: the same rules as the offline
 * extractor decide what is "concrete", so chit-chat ("辛苦了", "Nice work!") never makes a summary.
 *
 * Pure (no clock, no I/O); the segmenter that finds Chinese words is a parameter.
 */
import { DateTime } from 'luxon';
import { extractAssistantContribution } from '../extraction/assistant';
import { extractEntities } from '../extraction/entities';
import { cutCodePoints } from '../text/code-points';
import type { Segmenter } from '../text/segmenter';
import { detectLang, prepareText, splitSentences, trimPunct, type Lang } from '../text/sentences';
import type { ConversationMessage } from '../types';
import type { EpisodeDraft } from '../ports/recall';

// The episode store's port takes drafts, so their shape lives with the port.
export type { EpisodeDraft };

/** Longest summary, in code points: a routing key for retrieval, not a transcript. */
export const MAX_SUMMARY_CODE_POINTS = 320;
/** Only the start of a long message is read (a pasted log is not what the day was about). */
const MAX_MESSAGE_CHARS = 2000;
/** At most this many sentences of one message, so one long answer cannot fill the summary. */
const MAX_UNITS_PER_MESSAGE = 2;
/** A plain user sentence scores 0.5; anything above carries a named thing, a number or a suggestion. */
const SALIENT = 0.5;


interface Unit {
  text: string;
  messageId: string;
  order: number;
  score: number;
}

const NUMBER = /\d|(?<![一二两三四五六七八九十百千万])[一二两三四五六七八九十百千万]+(?:[个次天年月号日点块元岁本部秒斤]|公里|千米|分钟|小时|公斤)/u;
const NAMED_SHAPE = /《[^》《]+》|[“"「][^”"」“「]{2,}[”"」]|(?<!^)\b[A-Z]\p{Ll}[\p{L}'’-]*(?:\s+[A-Z][\p{L}'’-]+)*/u;
const TRIVIAL = /^(?:好的?|嗯+|哈+|谢谢|收到|明白了?|ok(?:ay)?|thanks?(?: you)?|got it|nice|great|cool|sure|lol|haha+)\b/iu;

function codePoints(text: string): number {
  return Array.from(text).length;
}

function isContent(text: string, lang: Lang): boolean {
  if (TRIVIAL.test(text) && codePoints(text) < 12) return false;
  return lang === 'zh' ? codePoints(text) >= 4 : text.split(/\s+/u).length >= 3;
}

/** How much a sentence tells about the day: named things, places, numbers; questions less. */
function salience(text: string, lang: Lang, segmenter: Segmenter, role: ConversationMessage['role'], question: boolean): number {
  let score = role === 'user' ? 0.5 : 0;
  const entities = extractEntities(text, lang, segmenter).filter((e) => e.kind !== 'date');
  if (entities.length > 0) score += 2;
  else if (NAMED_SHAPE.test(text)) score += 1.5;
  if (NUMBER.test(text)) score += 1;
  if (question) score -= 0.75;
  return score;
}

function previousUser(messages: readonly ConversationMessage[], i: number): ConversationMessage | undefined {
  for (let j = i - 1; j >= 0; j -= 1) if (messages[j]!.role === 'user') return messages[j];
  return undefined;
}

function nextUser(messages: readonly ConversationMessage[], i: number): ConversationMessage | undefined {
  const next = messages[i + 1];
  return next?.role === 'user' ? next : undefined;
}

function unitsOf(messages: readonly ConversationMessage[], segmenter: Segmenter): Unit[] {
  const units: Unit[] = [];
  messages.forEach((message, i) => {
    const content = prepareText(message.content.slice(0, MAX_MESSAGE_CHARS)).trim();
    if (!content) return;
    if (message.role === 'assistant') {
      // The assistant's concrete contribution is the part worth keeping; its small talk is not.
      const contribution = extractAssistantContribution(message, previousUser(messages, i), nextUser(messages, i), segmenter);
      if (contribution) units.push({ text: contribution.text, messageId: message.id, order: i, score: 3 });
      return;
    }
    const lang = detectLang(content);
    const mine = splitSentences(content)
      .map((s) => ({ text: trimPunct(s.text), question: s.question }))
      .filter((s) => isContent(s.text, lang))
      .map((s) => ({ text: s.text, messageId: message.id, order: i, score: salience(s.text, lang, segmenter, message.role, s.question) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, MAX_UNITS_PER_MESSAGE);
    units.push(...mine);
  });
  return units;
}

/**
 * Extractive summary of one episode's messages: the most salient sentences (named things,
 * places, numbers, the assistant's suggestions) up to {@link MAX_SUMMARY_CODE_POINTS}, restored
 * to conversation order. When nothing is salient, the first substantive user sentence stands
 * for the day; a day of pure chit-chat has an empty summary.
 */
export function summarizeEpisode(messages: readonly ConversationMessage[], segmenter: Segmenter): { summary: string; summaryMessageIds: string[] } {
  const units = unitsOf(messages, segmenter);
  const salient = units.filter((u) => u.score > SALIENT).sort((a, b) => b.score - a.score || a.order - b.order);
  // Nothing concrete was said: the first thing the user talked about stands for the day.
  const pool = salient.length > 0 ? salient : units.filter((u) => u.score >= 0).slice(0, 1);
  const picked: Unit[] = [];
  let size = 0;
  for (const unit of pool) {
    const cost = codePoints(unit.text) + 3;
    if (size + cost > MAX_SUMMARY_CODE_POINTS && picked.length > 0) continue;
    picked.push(unit);
    size += cost;
  }
  const summaryMessageIds = [...new Set(picked.map((u) => u.messageId))];
  const inOrder = [...picked].sort((a, b) => a.order - b.order);
  const summary = cutCodePoints(inOrder.map((u) => u.text).join(' / '), MAX_SUMMARY_CODE_POINTS);
  return { summary, summaryMessageIds };
}

/** Local day of an instant in an IANA zone. @throws RangeError for an unknown zone. */
export function localDay(at: Date, timeZone: string): string {
  const dt = DateTime.fromJSDate(at, { zone: timeZone });
  if (!dt.isValid) throw new RangeError(`Invalid IANA time zone: ${timeZone}`);
  return dt.toISODate()!;
}

/**
 * Cuts a conversation into one episode per local day (a conversation that runs past midnight
 * makes two) and summarises each. Messages in `hidden` (the user asked to forget them) are
 * neither summarised nor listed.
 *
 * @param messages the conversation in order; `at` is when each message was said.
 * @throws RangeError when `timeZone` is not a valid IANA zone.
 */
export function buildEpisodes(
  messages: readonly ConversationMessage[],
  opts: { timeZone: string; hidden?: ReadonlySet<string>; segmenter: Segmenter },
): EpisodeDraft[] {
  const byDay = new Map<string, ConversationMessage[]>();
  for (const m of messages) {
    if (opts.hidden?.has(m.id)) continue;
    const day = localDay(m.at, opts.timeZone);
    const list = byDay.get(day) ?? [];
    list.push(m);
    byDay.set(day, list);
  }
  return [...byDay.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([day, list]) => {
      const times = list.map((m) => m.at.getTime());
      return {
        day,
        startedAt: new Date(Math.min(...times)),
        endedAt: new Date(Math.max(...times)),
        messageIds: list.map((m) => m.id),
        ...summarizeEpisode(list, opts.segmenter),
      };
    });
}
