/**
 * What the assistant contributed: a concrete recommendation, method, explanation or commitment
 * that the user asked for. Acknowledgements and small talk ("好的，我记住了", "Nice work!") are
 * not memories, and a recommendation is never recorded as the user's own preference.
 */
import type { Segmenter } from '../text/segmenter';
import type { ConversationMessage, EntityRef, MemoryCandidate, RelationRef } from '../types';
import { extractEntities } from './entities';
import { extractKeywords } from './keywords';
import { detectLang, type Lang, prepareText, splitSentences, trimPunct } from './text';
import { boundMessage } from '../text/bounds';

const MAX_TEXT = 220;

const ACK =
  /^(?:好的|好嘞|[好嗯行]|明白了?|了解了?|收到|记住了|知道了|没问题|可以的|当然|ok(?:ay)?|got it|noted|sure|will do|done|understood|of course|absolutely|great|thanks|thank you|no problem|alright|perfect|yes)(?:[，,。.!！\s]+|$)/iu;
const ZH_MARKER = /推荐|建议|可以试试|试试|不妨|你可以|可以考虑|可以先|可以用|可以做|可以去|可以听|可以读|可以看|比如|例如|方法是|步骤|首先/u;
const EN_MARKER =
  /\b(?:i'd recommend|i recommend|i'd suggest|i suggest|i would suggest|you could|you might|you can try|you should|here's how|here is how|check out|give [\w\s]+ a try|i'd go with|how about|what about|recommend|suggest)\b|^(?:try|consider)\b|\btry (?:a|an|the|this|out|using|adding|running|\w+ing)\b|steps?:|^(?:start|begin) (?:with|by)\b|^first,/iu;
/** Praise that recommends only when a recommendation was asked for ("X is great for long drives"). */
const SOFT_MARKER = /\b(?:is|are) (?:great|perfect|a great|a good|excellent|worth)|\bwould be (?:great|perfect|a good)|不错|很好看|很好听|值得/iu;
/** Suggestions phrased as questions ("How about…?", "要不要试试…？") still suggest something. */
const QUESTION_SUGGESTION = /^(?:how about|what about|why not|maybe try)\b|要不要|要不|不如|何不/iu;
/** A sentence that continues the previous suggestion ("Or a coffee club subscription."). */
const CONTINUATION = /^(?:or|and|also|plus|alternatively|或者|还有|另外|也可以|再)/iu;
/** The user asked for a recommendation or a way to do something. */
const ASKED_FOR = /推荐|建议|有什么|有没有|哪些|哪个|怎么|如何|办法|方法|\b(?:suggest|recommend|any|ideas?|what should|which|how)\b|[?？]\s*$/iu;
const STEPS = /(?:^|[\s：:])(?:\d+[.)、]|[①②③④⑤⑥⑦⑧⑨⑩]|第[一二三四五六七八九十]步|step \d)/iu;
const NAMED = /《[^》《]+》|[“"「][^”"」“「]+[”"」]|(?<![.!?]\s|^|[\p{L}'’.-])(?:[A-Z][\p{L}'’.-]+\s+)+[A-Z][\p{L}'’.-]+|(?<!\d)\d+(?:-\d+){1,3}/u;

const ZH_LEAD = /^我?(?:推荐|建议)你?(?:可以)?(?:试试|看看|读读|听听|考虑)?|^你?可以(?:试试|试一下|考虑)?|^不妨(?:试试)?|^试试看?/u;
const EN_LEAD = /^(?:i'd|i would|i)\s+(?:recommend|suggest)(?:ing)?\s+|^(?:you could|you might|you can)\s+(?:try\s+)?|^(?:try|consider)\s+|^(?:how|what) about\s+/iu;

/** A request that asks for an explanation; a substantive answer to it is worth keeping. */
const QUESTION_REQUEST = /[?？]\s*$|吗\s*$|怎么|为什么|什么是|如何|是什么|\b(?:how|why|what|explain|which)\b/iu;
/** "…以后推荐食物会避开花生" / "I'll keep that in mind": the assistant repeating back what the user said. */
const COMMITMENT_ECHO = /以后|记住|记下|避开|不会再|\b(?:i'll|i will|keep (?:that|it) in mind|remember|avoid)\b/iu;
const MIN_EXPLANATION = { zh: 25, en: 8 } as const;

const ZH_REJECT = /不喜欢|不感兴趣|不要这个|看过了|读过了|听过了|试过了|用过了|没用|不管用|不行|算了|换一个|换个|有别的|别的吗|不太想|没兴趣|太难了|不适合/u;
const EN_REJECT =
  /^(?:no|nope|nah)\b|\bnot really\b|\b(?:i've|i have) (?:already )?(?:read|seen|tried|watched|heard|done|listened to|used) (?:that|it|this|those|them)\b|\balready (?:read|seen|tried|watched|heard)\b|\b(?:don't|do not) (?:like|want) (?:that|it|this)\b|\bnot interested\b|\bsomething else\b|\b(?:didn't|doesn't) work\b|\bnot for me\b|\bboring\b/iu;
const ACCEPT = /^(?:好|好的|谢谢|太好了|感谢|不错|行)|我(?:这周|今晚|明天|马上|回头)?就?(?:去|会)?试试|去买|收藏了|\b(?:sounds (?:good|great|perfect)|thanks|thank you|i'll (?:try|check|queue|give|look)|will do|great|perfect|love it)\b/iu;

function hasSuggestion(text: string, lang: Lang, requested: boolean): boolean {
  if (requested && SOFT_MARKER.test(text)) return true;
  return (lang === 'zh' ? ZH_MARKER : EN_MARKER).test(text) || (lang === 'zh' && EN_MARKER.test(text) && !/\p{Script=Han}/u.test(text));
}

/** How the user reacted right after: accepted, rejected, or neither. */
function reaction(next: ConversationMessage | undefined): 'accepted' | 'rejected' | 'none' {
  if (!next) return 'none';
  const t = next.content.trim();
  if (ZH_REJECT.test(t) || EN_REJECT.test(t)) return 'rejected';
  return ACCEPT.test(t) ? 'accepted' : 'none';
}

function explanationText(content: string, lang: Lang): string | null {
  const sentences = splitSentences(content)
    .filter((s) => !s.question)
    .map((s) => trimPunct(s.text.replace(ACK, '')))
    .filter(Boolean)
    .slice(0, 2);
  const body = sentences.join(lang === 'zh' ? '。' : '. ');
  const size = lang === 'zh' ? body.length : body.split(/\s+/u).length;
  if (size < MIN_EXPLANATION[lang]) return null;
  return body.length > MAX_TEXT ? `${body.slice(0, MAX_TEXT)}…` : body;
}

function contributionText(content: string, lang: Lang, requested: boolean): { body: string; named: boolean } | null {
  const picked: string[] = [];
  let named = false;
  for (const s of splitSentences(content)) {
    const text = s.text.replace(ACK, '').trim();
    if (!text || (s.question && !(requested && QUESTION_SUGGESTION.test(text)))) continue;
    const isNamed = NAMED.test(text);
    const follows = picked.length > 0 && (isNamed || CONTINUATION.test(text));
    if (hasSuggestion(text, lang, requested) || STEPS.test(text) || follows || (requested && (isNamed || QUESTION_SUGGESTION.test(text)))) {
      picked.push(text);
      named ||= isNamed;
    }
  }
  if (picked.length === 0) return null;
  const first = (picked[0] ?? '').replace(lang === 'zh' ? ZH_LEAD : EN_LEAD, '');
  const joined = [first, ...picked.slice(1)].map(trimPunct).filter(Boolean).join(lang === 'zh' ? '；' : '. ');
  return joined ? { body: joined.length > MAX_TEXT ? `${joined.slice(0, MAX_TEXT)}…` : joined, named } : null;
}

/**
 * The assistant_contribution candidate of one assistant message, or null for acknowledgements
 * and small talk. `request` is the user message it answered, `next` the user's reaction.
 */
export function extractAssistantContribution(
  message: ConversationMessage,
  request: ConversationMessage | undefined,
  next: ConversationMessage | undefined,
  segmenter: Segmenter,
): MemoryCandidate | null {
  const content = prepareText(boundMessage(message.content)).trim();
  const lang = detectLang(content);
  const acked = ACK.test(content);
  const requested = request !== undefined && ASKED_FOR.test(request.content.trim());
  const suggestion = contributionText(content, lang, requested);
  // An answer to "怎么…/why…?" is an explanation the user asked for, even without suggestion words.
  const explanation = !suggestion && request && QUESTION_REQUEST.test(request.content.trim()) ? explanationText(content, lang) : null;
  const found = suggestion ?? (explanation ? { body: explanation, named: false } : null);
  if (!found) return null;
  // "好的，我记住了，以后推荐食物会避开花生" echoes the user; only named things or steps make it new.
  if (acked && !found.named && !STEPS.test(content) && COMMITMENT_ECHO.test(found.body)) return null;
  if ((lang === 'zh' ? found.body.length < 6 : found.body.split(/\s+/u).length < 3) && !found.named) return null;

  const label = explanation
    ? lang === 'zh' ? '助手解释：' : 'Assistant explained: '
    : lang === 'zh' ? (found.named ? '助手推荐：' : '助手建议：') : 'Assistant suggested: ';
  const text = `${label}${found.body}`;
  const react = reaction(next);
  const base = explanation ? 0.7 : found.named ? 0.8 : 0.75;
  const confidence = react === 'rejected' ? 0.5 : react === 'accepted' ? Math.max(base, 0.85) : base;
  const entities: EntityRef[] = extractEntities(found.body, lang, segmenter).filter((e) => e.kind !== 'date');
  const relations: RelationRef[] = entities
    .filter((e) => ['title', 'name', 'method', 'project', 'framework', 'language', 'database', 'infra', 'tool', 'place'].includes(e.kind))
    .map((e) => ({ source: 'assistant', relation: 'recommended', target: e.name }));
  // The request's words ("podcast", "科幻小说") are how the user will ask about it later.
  const requestWords = request ? extractKeywords(prepareText(request.content), detectLang(request.content), segmenter, 6) : [];
  const keywords = [...new Set([...extractKeywords(found.body, lang, segmenter), ...requestWords])].slice(0, 20);

  return {
    text,
    type: 'assistant_contribution',
    confidence,
    importance: 0.5,
    keywords,
    entities,
    relations,
    scope: 'global',
    emotionTags: [],
    messageIds: [message.id],
    role: 'assistant',
    saidAt: message.at,
    intent: 'assert',
  };
}
