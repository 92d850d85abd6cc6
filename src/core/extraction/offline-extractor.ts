/**
 * Deterministic, rule-based memory extractor for when no LLM is available. Pure: no I/O, no
 * environment, no clock — every time comes from the messages' own timestamps.
 *
 * Per user message: split into sentences and clauses, classify each clause with the rules of
 * its language (zh or en), group dependent clauses with the statement they belong to, and build
 * one candidate per statement. Per assistant message: keep only concrete recommendations,
 * methods or commitments, labelled as the assistant's.
 */
import type { Segmenter } from '../text/segmenter';
import type { ConversationMessage, MemoryCandidate } from '../types';
import { answerCandidate } from './answers';
import { extractAssistantContribution } from './assistant';
import { buildCandidate } from './candidate';
import { type NetStatement, selectNetStatements } from './net-statements';
import { oneVagueResolution } from './resolution';
import { segmentMessage } from './segments';
import { detectLang, normalizeFact, prepareText, splitSentences } from './text';
import { boundMessage } from '../text/bounds';

/** Canonical form used to detect "the same normalised fact" (lowercase, no punctuation, no leading 我/I'm/My, half-width). */
export { normalizeFact } from './text';

/** Options of {@link extractCandidatesOffline}. */
export interface OfflineExtractorOptions {
  /** IANA zone the user lives in, for resolving "明天"/"next Friday" to a day; default 'UTC'. */
  timezone?: string;
  /** Finds and tags Chinese words (jieba in production: src/adapters/text/jieba.ts). */
  segmenter: Segmenter;
}

/** Small talk that never holds a memory, matched on the whole message. */
const CHITCHAT =
  /^(?:hi|hey|hello|yo|thanks|thank you|thx|ty|lol|lmao|haha+|ok|okay|ok cool|cool|nice|great|awesome|good|sure|yes|yeah|yep|no|nope|bye|good night|good morning|gm|gn|你好|您好|嗨|哈喽|谢谢|谢了|多谢|哈{2,}|呵呵|好的|[好行]|嗯+|哦+|可以|晚安|早安|早|再见|拜拜|ok的|收到|明白|了解)[\s!！.。~～?？]*$/iu;


function extractFromUser(
  message: ConversationMessage,
  previous: ConversationMessage | undefined,
  zone: string,
  segmenter: Segmenter,
  withStatements: boolean,
): { candidates: MemoryCandidate[]; statements: NetStatement[] } {
  const content = prepareText(boundMessage(message.content)).trim();
  if (!content || CHITCHAT.test(content)) return { candidates: [], statements: [] };
  const lang = detectLang(content);
  const candidates: MemoryCandidate[] = [];
  const covered: { start: number; end: number }[] = [];
  for (const seg of segmentMessage(content, lang, segmenter)) {
    const candidate = buildCandidate(seg, { message, content, lang, zone, segmenter });
    if (!candidate) continue;
    candidates.push(candidate);
    covered.push(seg);
  }
  // A short answer to the assistant's question ("Cello.", "乐乐") states its value only; the
  // question right before names what it is. A first sentence the rules already read is not one.
  const firstEnd = splitSentences(content)[0]?.end ?? content.length;
  if (!covered.some((c) => c.start < firstEnd)) {
    const answer = answerCandidate(previous, message, content, lang, { zone, segmenter });
    if (answer) {
      candidates.unshift(answer);
      covered.push({ start: 0, end: content.length });
    }
  }
  return { candidates: oneVagueResolution(candidates), statements: withStatements ? selectNetStatements(message, content, lang, covered, segmenter) : [] };
}

function neighbourUser(messages: readonly ConversationMessage[], from: number, step: 1 | -1): ConversationMessage | undefined {
  for (let i = from + step; i >= 0 && i < messages.length; i += step) {
    const m = messages[i];
    if (m?.role === 'user') return m;
    // Only the reply right after counts as the reaction; another assistant turn in between breaks it.
    if (step === 1) return undefined;
  }
  return undefined;
}

/** Same normalised text and type said twice in one batch is one candidate with both provenances. */
export function dedupeCandidates(candidates: MemoryCandidate[]): MemoryCandidate[] {
  const byKey = new Map<string, MemoryCandidate>();
  const out: MemoryCandidate[] = [];
  for (const c of candidates) {
    const key = `${c.role}|${c.type}|${c.intent}|${normalizeFact(c.text)}`;
    const seen = byKey.get(key);
    if (seen) {
      seen.messageIds = [...new Set([...seen.messageIds, ...c.messageIds])];
      seen.confidence = Math.max(seen.confidence, c.confidence);
      seen.importance = Math.max(seen.importance, c.importance);
      continue;
    }
    byKey.set(key, c);
    out.push(c);
  }
  return out;
}

/**
 * Extracts memory candidates from a conversation without an LLM.
 *
 * @param messages the conversation, in order; each message's `at` is the candidate's `saidAt`.
 * @param options `timezone` (IANA, default 'UTC') resolves relative days of events; `segmenter`
 *   finds Chinese words.
 * @returns candidates in message order: user statements (facts, preferences, goals, pain points,
 *   events, decisions, instructions, updates, forget requests) and the assistant's concrete
 *   contributions. Chit-chat and questions yield nothing.
 */
export function extractCandidatesOffline(messages: ConversationMessage[], options: OfflineExtractorOptions): MemoryCandidate[] {
  return planOfflineExtraction(messages, options, false).candidates;
}

/**
 * The rules' candidates (as {@link extractCandidatesOffline}) and, when `withStatements`, the
 * statements of user messages the rules did not turn into a candidate and that may still be
 * durable statements about the user: the input of the recall net (src/core/extraction/net.ts).
 */
export function planOfflineExtraction(
  messages: ConversationMessage[],
  options: OfflineExtractorOptions,
  withStatements = true,
): { candidates: MemoryCandidate[]; statements: NetStatement[] } {
  const zone = options.timezone ?? 'UTC';
  const { segmenter } = options;
  const out: MemoryCandidate[] = [];
  const statements: NetStatement[] = [];
  messages.forEach((_, i) => {
    const one = planOfflineMessage(messages, i, { timezone: zone, segmenter }, withStatements);
    out.push(...one.candidates);
    statements.push(...one.statements);
  });
  return { candidates: dedupeCandidates(out), statements };
}

/**
 * The rules' plan for the one message at `index` (its neighbours are context only: the user
 * turns around an assistant turn, the assistant's question right before a user turn), not deduplicated: a caller can bound the cost of each message on its own
 * (src/adapters/extraction/rule-pool.ts) and merge with {@link dedupeCandidates}.
 */
export function planOfflineMessage(
  messages: readonly ConversationMessage[],
  index: number,
  options: OfflineExtractorOptions,
  withStatements = true,
): { candidates: MemoryCandidate[]; statements: NetStatement[] } {
  const message = messages[index];
  if (!message) return { candidates: [], statements: [] };
  if (message.role === 'user') return extractFromUser(message, messages[index - 1], options.timezone ?? 'UTC', options.segmenter, withStatements);
  const contribution = extractAssistantContribution(message, neighbourUser(messages, index, -1), neighbourUser(messages, index, 1), options.segmenter);
  return { candidates: contribution ? [contribution] : [], statements: [] };
}
