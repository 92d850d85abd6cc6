/**
 * A short answer to the assistant's question ("What instrument do you play?" → "Cello. Started
 * when I was eight."; "你儿子叫什么名字？" → "乐乐"): the user's turn carries the value, the
 * question carries the predicate. The memory is the question turned into the user's own
 * statement with the answer in it ("What instrument I play: Cello…", "我儿子叫乐乐"), typed by the
 * rules when that statement is one they know, else by the question's predicate (a taste, a goal,
 * a problem, or a fact). Provenance stays with the user's message: the question is context only,
 * and the answer must carry a value of its own (no "sure", "not really", jokes, questions back,
 * errands, answers to the assistant's offers).
 */
import type { Segmenter } from '../text/segmenter';
import { isFailureReport, isRequestToAssistant, isSmallTalk } from '../text/utterance-shape';
import type { ConversationMessage, MemoryCandidate, MemoryType } from '../types';
import { buildCandidate, HEDGED_CEILING } from './candidate';
import { classifyClause } from './classify';
import { isHedged, makeMatch } from './match';
import { isQuestionLike } from './net-statements';
import { hasContent } from './segments';
import { type Lang, prepareText, splitSentences, trimPunct } from './text';
import { boundMessage } from '../text/bounds';
import { stripTrailing } from '../text/strip';

/** The assistant offering to do something ("Want me to…?", "要不要我…？"): a yes is an errand, not a fact. */
const EN_OFFER = /\b(?:(?:would|do) you (?:like|want) me|want me|shall i|should i|can i|may i|need me|let me|me to)\b/iu;
const ZH_OFFER = /要不要我|需要我|要我|我[来帮给替]你|我把|帮你/u;
/** Questions about the task at hand ("Which format do you want, PDF or Word?", "这份用什么模板？"): the answer is a one-off choice. */
const EN_TASK_Q = /\b(?:would you like|do you want(?! to\b)|do you need|should (?:it|i|the|this)|for (?:this|the|that) (?:one|task|report|email|trip|file|script|draft|meeting)|this (?:one|time|file|report|email|draft|script|version))\b/iu;
const ZH_TASK_Q = /这[个份次篇段张回版]|那[个份篇段张]|要不要|需要什么|想要什么样/u;
/** Questions about how something went or what the user thinks: the answer is a passing opinion. */
const EN_PHATIC_Q = /^(?:how(?:'s| is| was| are| were| did)|what do you think|what did you think|how do you (?:feel|find)|anything else|what's up|what about)\b/iu;
const ZH_PHATIC_Q = /怎么样|如何|觉得|还有(?:什么|别的)|在忙什么|有什么我能/u;
/** The question is about the user: addressed to them, or elliptical ("Any pets at home?", "Which gym?"). */
const EN_ABOUT_USER = /\b(?:you|your|yours|you're|you've|yourself)\b|^(?:any|which|what kind of|what sort of)\b/iu;
const ZH_ABOUT_USER = /[你您]/u;
/**
 * The question has a slot for a value: a wh-word, or an indefinite ("Do you take any…?", "Are you
 * allergic to anything?"). "Is Biscuit your dog?" or "你妈妈开心吗？" is answered yes or no, with
 * a statement of its own that the rules read.
 */
const EN_SLOT = /^(?:what|which|where|when|who|whose|how)\b|\b(?:any|anything|anyone|anywhere|something|someone)\b/iu;
const ZH_SLOT = /什么|哪|谁|几|多少|怎么|怎样|多久|多长|多大|多远/u;

/** An answer that declines, denies, jokes or defers holds no value. */
const NEGATION = /^(?:no|nope|nah|not|none|never|nothing|hmm|dunno|i don't know|idk|没有?|不是|不|无|还没|暂时没)(?![a-z])/iu;
const JOKE = /\b(?:kidding|joking|jk|lol|lmao)\b|开玩笑|开个玩笑|哈哈|说来话长|下次再聊/iu;
const AFFIRM = /^(?:yes|yeah|yep|yup|sure|of course|definitely|是的|是啊|对的?|嗯+|有的?|当然)[,，.。!！\s]+(?=\S)/iu;

/** The value of an answer is short: a name, a thing, a time ("Korean", "二甲双胍"). */
const MAX_VALUE = { en: 7, zh: 14 } as const;

/** The predicate of the question decides the type when no rule knows the composed statement. */
const PREFERENCE_Q = /\bfavou?rite\b|\bprefer|\blike\b|\benjoy|\busually\b|\btypically\b|\bnormally\b|\bhow do you take\b|\bsupport\b|\broot for\b|\bfan of\b|最喜欢|喜欢|最爱|偏好|爱吃|爱喝|讨厌|一般|平时|通常|习惯/iu;
const GOAL_Q = /\bgoals?\b|\bplan(?:s|ning)?\b|\bhop(?:e|ing)\b|\baim(?:ing)?\b|\bwant to\b|\btrying to\b|\bsaving (?:up )?for\b|\bwork(?:ing)? towards?\b|目标|打算|计划|想要?|攒钱|希望/iu;
const PAIN_Q = /\bbother|\bproblem|\bissue|\btrouble|\bstruggl|\bannoy|\bfrustrat|\bstress|\bslow(?:ing)? (?:you )?down|\bhurt|\bpain\b|\bwrong\b|头疼|困扰|烦|麻烦|问题|卡住|难受|疼/iu;

/** The assistant's last sentence when it asks the user something about themselves, else null. */
export function questionOf(message: ConversationMessage | undefined): { text: string; lang: Lang } | null {
  if (message?.role !== 'assistant') return null;
  const content = prepareText(boundMessage(message.content)).trim();
  const last = splitSentences(content).at(-1);
  if (!last?.question) return null;
  // "Nice, which airline do you fly?": a short lead-in before the last comma is not the question.
  const cut = Math.max(last.text.lastIndexOf(','), last.text.lastIndexOf('，'));
  const head = last.text.slice(0, cut + 1);
  const lead = cut >= 0 && /[你您]|\byou\b|\byour\b/iu.test(last.text.slice(cut + 1)) && (head.length < 20 || /^(?:so|and|oh|nice|cool|great|ok(?:ay)?)\b/iu.test(head));
  const text = trimPunct(lead ? last.text.slice(cut + 1) : last.text);
  const lang: Lang = /\p{Script=Han}/u.test(text) ? 'zh' : 'en';
  if (lang === 'en' ? EN_OFFER.test(text) || EN_TASK_Q.test(text) || EN_PHATIC_Q.test(text) || !EN_ABOUT_USER.test(text) || !EN_SLOT.test(text) : ZH_OFFER.test(text) || ZH_TASK_Q.test(text) || ZH_PHATIC_Q.test(text) || !ZH_ABOUT_USER.test(text) || !ZH_SLOT.test(text)) return null;
  return { text, lang };
}

/** The user's value: the first clause of their first sentence, unless it declines, jokes, asks or errands. */
function valueOf(content: string, lang: Lang, segmenter: Segmenter): { value: string; rest: string } | null {
  if (JOKE.test(content)) return null;
  const first = splitSentences(content)[0];
  if (!first || first.question || isQuestionLike(first.text, lang)) return null;
  const body = trimPunct(first.text).replace(AFFIRM, '');
  if (!body || NEGATION.test(body) || isSmallTalk(body, lang) || isRequestToAssistant(body, lang)) return null;
  const [value = ''] = body.split(/[,，;；:：、]\s*/u);
  const size = lang === 'zh' ? value.length : value.split(/\s+/u).length;
  if (!value || size > MAX_VALUE[lang] || isSmallTalk(value, lang) || /^(?:this|that|it|these|those|这个?|那个?|它)$/iu.test(value)) return null;
  // A value addressed back to the assistant ("你看着办", "you decide") is no value of the user's.
  if (/^(?:[你您]|you\b)/iu.test(value)) return null;
  // A clause with its own subject or verb ("她颈椎不好", "Biscuit is my beagle", "I go at 6") is a
  // statement, not a value: the rules read it, or it is not about the user.
  if (lang === 'zh' ? /^(?:[我他她它]|我们|他们|她们)/u.test(value) : /^(?:i|i'm|we|we're|he|she|they|it|it's|that|that's|there)\b|\b(?:is|are|was|were|am)\b/iu.test(value)) return null;
  // Names and things are often not nouns to the tagger ("乐乐", "楼上装修"): two characters do.
  if (lang === 'zh' ? !hasContent(value, lang, segmenter) && !/[A-Za-z0-9]|\p{Script=Han}{2,}/u.test(value) : !/[\p{L}\p{N}]{2,}/u.test(value)) return null;
  // The rest of the turn, as the user wrote it ("Cello. Started when I was eight.").
  const rest = content.slice(content.indexOf(value) + value.length).trimEnd();
  return { value, rest: stripTrailing(rest, /[。.!！~～]$/u, 1) };
}

/** "What's your daughter's name" → "my daughter's name"; "What instrument do you play" → "What instrument I play". */
function enStatement(question: string): string {
  let q = question.replace(/\s+/gu, ' ').replace(/,? (?:by the way|if you know it|if you don't mind me asking|if i may ask|out of curiosity)$/iu, '');
  q = q
    .replace(/\byou're\b/giu, "I'm")
    .replace(/\byou've\b/giu, "I've")
    .replace(/\byours\b/giu, 'mine')
    .replace(/\byourself\b/giu, 'myself')
    .replace(/\byour\b/giu, 'my')
    .replace(/\b(are|do|does|did|have|were|can|will|would) you\b/giu, '$1 I')
    // "bothering you", "slowing you down": an object pronoun.
    .replace(/(ing|\bto|\bfor|\bwith|\bat|\babout|\bof) you\b/giu, '$1 me')
    .replace(/\byou\b/giu, 'I');
  q = q
    .replace(/^(?:what|who|where|when)(?:'s| is| are)\s+(my\b.*)$/iu, '$1')
    .replace(/^((?:what|which|where|when|who|how)(?: (?:kind|sort|type) of)?(?: (?:much|many|often|long|far|old|time))?(?: \w+)??) (?:do|does|did) I\b/iu, '$1 I')
    .replace(/^((?:what|which|where|when|who|how)(?: \w+)??) are I\b/iu, "$1 I'm")
    .replace(/^((?:what|which|where|when|who|how)(?: \w+)??) have I\b/iu, "$1 I've")
    .replace(/^(?:do|did|does) I (.*)$/iu, 'I $1')
    .replace(/^are I (.*)$/iu, "I'm $1")
    .replace(/^have I (?:got )?(.*)$/iu, 'I have $1')
    .replace(/^is (anything|anyone|something|there anything)\b/iu, '$1')
    .replace(/^any /iu, '')
    .replace(/\b(?:any|anything|something|anyone|someone)$/iu, '')
    .replace(/\bany /giu, '');
  q = q.trim();
  return q.charAt(0).toUpperCase() + q.slice(1);
}

/** "你儿子叫什么名字" + "乐乐" → "我儿子叫乐乐"; null when the question names no slot for the value. */
function zhStatement(question: string, value: string): string | null {
  const q = stripTrailing(question.replace(/[你您]/gu, '我'), /[吗呢呀啊吧]$/u, 1);
  const slot = /叫什么名字|什么(?:时候|东西|人|地方|事|样的?)?|哪(?:里的?|一个|[儿个家种些位所])?|谁|几点|多少|几岁/u;
  const m = slot.exec(q);
  if (!m) return null;
  const filled = m[0] === '叫什么名字' ? `叫${value}` : value;
  return `${q.slice(0, m.index)}${filled}${q.slice(m.index + m[0].length)}`;
}

function typeFromQuestion(question: string): MemoryType {
  if (PAIN_Q.test(question)) return 'pain_point';
  if (GOAL_Q.test(question)) return 'goal';
  if (PREFERENCE_Q.test(question)) return 'preference';
  return 'fact';
}

const ANSWER_TYPES: ReadonlySet<MemoryType> = new Set(['fact', 'preference', 'goal', 'pain_point']);

/**
 * The memory of a user's short answer to the assistant's question right before it, or null.
 * `content` is the user's prepared message; the candidate cites only the user's message.
 */
export function answerCandidate(
  previous: ConversationMessage | undefined,
  message: ConversationMessage,
  content: string,
  lang: Lang,
  ctx: { zone: string; segmenter: Segmenter },
): MemoryCandidate | null {
  const question = questionOf(previous);
  if (!question) return null;
  const answer = valueOf(content, lang, ctx.segmenter);
  if (!answer) return null;
  const zhFilled = question.lang === 'zh' ? zhStatement(question.text, answer.value) : null;
  const statement =
    question.lang === 'zh'
      ? (zhFilled ?? `${stripTrailing(question.text.replace(/[你您]/gu, '我'), /[吗呢呀啊吧]$/u, 1)}：${answer.value}`)
      : `${enStatement(question.text)}: ${answer.value}`;
  const text = `${statement}${answer.rest}`;
  // A statement the rules know ("我对芒果过敏", "I'm allergic to: penicillin") keeps their type and relations.
  const ruled = classifyClause(question.lang === 'en' ? statement.replace(/:\s*/u, ' ') : statement, question.lang, ctx.segmenter);
  const byRule = ruled && ruled.intent === 'assert' && ANSWER_TYPES.has(ruled.type) ? ruled : null;
  let type = byRule?.type ?? typeFromQuestion(question.text);
  if (type !== 'pain_point' && isFailureReport(content, lang)) type = 'pain_point';
  const match = byRule && byRule.type === type ? { ...byRule, rule: `answer+${byRule.rule}`, confidence: Math.min(byRule.confidence, 0.8) } : makeMatch('answer.question', { type, confidence: 0.75 });
  const seg = { start: 0, end: text.length, match, relations: [...match.relations], event: match.event };
  const candidate = buildCandidate(seg, { message, content: text, lang: question.lang, zone: ctx.zone, segmenter: ctx.segmenter });
  // Only the user's words hedge ("maybe Korean"); the question's "what kind of…" does not.
  if (candidate) candidate.confidence = isHedged(content) ? Math.min(match.confidence * 0.75, HEDGED_CEILING) : match.confidence;
  return candidate;
}
