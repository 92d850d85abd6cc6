/**
 * Which statements of a user message the recall net ({@link ./net.ts}) looks at: the sentences
 * the rules did not turn into a candidate, minus what is structurally not a durable statement
 * about the user. These guards are about the shape of a sentence, never about its topic:
 * - a question (its question clause; "I can't eat gluten, what should I cook?" keeps the first);
 * - a sentence whose subject is someone else ("My sister…", "我同事…", "他…") and that does not
 *   refer back to the user;
 * - a hedge ("maybe", "可能"): the rules' ceiling would keep it below the ingestion bar anyway;
 * - a dismissal ("never mind…", "算了…");
 * - a request about the task at hand ("for this script", "这次", "帮我把这段…");
 * - small talk (greetings, thanks, "lol nothing, just asking") and errands for the assistant
 *   ("remind me…", "帮我订…"), see ./utterance-shape.ts;
 * - material the user pasted or quoted (not in their own words), and fragments too short or too
 *   long to be a statement.
 */
import type { Segmenter } from '../text/segmenter';
import type { ConversationMessage } from '../types';
import { EN_SHORT_LIVED, ZH_SHORT_LIVED } from './dates';
import { isHedged, isTaskScoped } from './match';
import { ownWords } from '../text/quoted';
import { hasContent } from './segments';
import { isAboutSomeoneElse } from './subjects';
import { isRequestToAssistant, isSmallTalk } from '../text/utterance-shape';
import { imaginedSentences } from './hypotheticals';
import { type Lang, type Span, splitSentences, stripFiller, trimPunct } from './text';

export { isAboutSomeoneElse } from './subjects';

/** A statement for the net: a span of the prepared message text. */
export interface NetStatement {
  message: ConversationMessage;
  /** The prepared message text the offsets refer to. */
  content: string;
  lang: Lang;
  start: number;
  end: number;
  text: string;
  /** Says it is a passing state ("最近", "these days"): the candidate expires like the rules' do. */
  shortLived: boolean;
}

const MAX_STATEMENT = 200;

/** A wh-word asking (not "When I travel, I…"), or an auxiliary before its subject ("Is it…", "Do you…"). */
const EN_QUESTION =
  /^(?:(?:what|how|why|which|where|when|who|whom|whose)\s+(?:is|are|was|were|am|do|does|did|can|could|should|would|will|shall|may|might|has|have|about|if|much|many|long|often|far|old|big|kind|sort|type|else)\b|(?:what's|how's|where's|who's|why's|when's|how come)\b|(?:is|are|am|was|were|do|does|did|can|could|should|would|will|shall|may|might|have|has|isn't|aren't|don't|doesn't|didn't|won't|can't|shouldn't)\s+(?:i|you|we|it|there|they|he|she|this|that|these|those|my|your|our|the|a|an|any|anyone|anybody|someone|somebody)\b)/iu;
const ZH_QUESTION =
  /^(?:请问|怎么|怎样|如何|为什么|为啥|什么|哪|谁|是否|有没有|能不能|可不可以|要不要|会不会|是不是|该不该)|(?:[吗么呢]|没有)$|(\p{Script=Han})不\1$|(?:哪个|哪种|哪家|哪儿|哪里|多少|多久|几[点个天次]|怎么样|如何)(?:好|更好|比较好)?$/u;

/** Requests about material at hand: an imperative with "this/these…", "帮我把这段…". */
const EN_REQUEST_VERB =
  /^(?:please\s+|pls\s+|kindly\s+|(?:can|could|would|will) you\s+(?:please\s+)?|let's\s+|let us\s+|just\s+)?(?:write|make|do|use|translate|draft|give|send|show|fix|rewrite|summari[sz]e|convert|create|build|add|change|turn|put|format|check|review|explain|generate|list|find|help|try|go with|run|skip|reply|answer|ignore|drop|remove|redo)\b/iu;
const EN_DEIXIS = /\b(?:this|these|that|those|today's|tonight's|the next|the following|below|above)\b/iu;
const ZH_REQUEST = /^(?:请|麻烦)?你?(?:帮我|给我|替我|帮忙|把|将)/u;
const ZH_DEIXIS = /这[个段份篇张些次回版条句里]|那[个段份篇张些]|下面|上面|以下/u;

/** Dismissals and acknowledgements ("never mind…", "算了…") close a topic, they state nothing. */
const DISMISSAL = /^(?:never ?mind|nvm|forget it|no worries|whatever|ok(?:ay)? then|all good|算了|没事了?|不用了|无所谓|随便)(?![a-z])/iu;

/** True when the sentence (or clause) asks something rather than states it. */
export function isQuestionLike(text: string, lang: Lang): boolean {
  const body = stripFiller(text, lang).text.trim();
  return /[?？]\s*$/u.test(body) || EN_QUESTION.test(body) || (lang === 'zh' && ZH_QUESTION.test(body.replace(/(?<![。！!~～])[。！!~～]+$/u, '')));
}

/** True when the sentence asks for something about the task at hand, not about the user. */
export function isOneOffRequest(text: string, lang: Lang): boolean {
  const body = stripFiller(text, lang).text.trim();
  if (isTaskScoped(body)) return true;
  if (EN_REQUEST_VERB.test(body) && EN_DEIXIS.test(body)) return true;
  return lang === 'zh' && ZH_REQUEST.test(body) && ZH_DEIXIS.test(body);
}

function longEnough(text: string, lang: Lang): boolean {
  if (lang === 'zh') return (text.match(/\p{Script=Han}/gu)?.length ?? 0) >= 4;
  return text.split(/\s+/u).filter((w) => /\p{L}/u.test(w)).length >= 3;
}

/**
 * The statements of one (prepared) user message that the net should judge: its sentences that
 * overlap none of `covered` (the spans the rules turned into candidates) and pass the guards.
 */
export function selectNetStatements(message: ConversationMessage, content: string, lang: Lang, covered: readonly Span[] | readonly { start: number; end: number }[], segmenter: Segmenter): NetStatement[] {
  const own = ownWords(content);
  const out: NetStatement[] = [];
  const sentences = splitSentences(content);
  const imagined = imaginedSentences(sentences, lang);
  for (const [i, sentence] of sentences.entries()) {
    // What the user imagines says nothing about them (./hypotheticals.ts); the rules keep what in it addresses the assistant.
    if (imagined[i]) continue;
    if (covered.some((c) => c.start < sentence.end && sentence.start < c.end)) continue;
    let clauses = sentence.clauses;
    // "I can't eat gluten, what should I cook?": the statement before the question still counts.
    if (sentence.question || isQuestionLike(clauses.at(-1)?.text ?? '', lang)) clauses = clauses.slice(0, -1);
    const first = clauses[0];
    const last = clauses.at(-1);
    if (!first || !last) continue;
    const cut = stripFiller(first.text, lang).cut;
    const start = first.start + cut;
    const raw = content.slice(start, last.end);
    const text = trimPunct(raw);
    if (!text || text.length > MAX_STATEMENT || !longEnough(text, lang)) continue;
    if (!own.includes(text)) continue;
    if (DISMISSAL.test(text) || isQuestionLike(text, lang) || isAboutSomeoneElse(text, lang) || isHedged(text) || isOneOffRequest(text, lang)) continue;
    // Small talk and errands for the assistant say nothing durable about the user (#23).
    if (isSmallTalk(text, lang) || isRequestToAssistant(text, lang)) continue;
    if (!hasContent(text, lang, segmenter)) continue;
    const at = start + raw.indexOf(text);
    out.push({ message, content, lang, start: at, end: at + text.length, text, shortLived: (lang === 'zh' ? ZH_SHORT_LIVED : EN_SHORT_LIVED).test(text) });
  }
  return out;
}
