/**
 * Is a sentence a hypothetical? "If I had a dog I'd walk it every morning", "假如我住在东京…",
 * "万一明天我被裁了，我就去摆摊": what the user imagines is neither a fact, a taste, a goal nor a
 * plan of theirs, so no statement in it becomes a memory (a request to the assistant inside one
 * still counts: "万一我忘了，记得提醒我").
 *
 * A plain conditional about the user's real life stays a statement: "如果吃了海鲜，我就会起红疹",
 * "If I have coffee after 3pm I can't sleep". What tells them apart:
 * - English marks the unreal with "I'd" / "I would" in the consequent after "if", or opens with
 *   "imagine" / "picture me" / "in another life";
 * - Chinese marks it with the opener alone: 假如 / 假设 / 万一 / 要不是 / 早知道 / 想象一下, or
 *   如果 / 要是 with "当初", "哪天" / "有一天" (a day that has not come) or "我是" (being someone
 *   else). A bare 如果 / 要是 is as often a habit as a wish, so it is read as one only when the
 *   rest of the sentence says so: a guess about the outcome ("估计", "说不定": what the user knows
 *   from habit, they do not guess), coming to have what they do not have ("如果我养了只柯基"), a
 *   wish or a day that may never come ("…就好了", "将来"), or one coming day ("如果明天下雨我就
 *   不去了": a plan for that day, not a lasting fact).
 * - In English too a condition on one coming day ("if it rains tomorrow") is a one-off plan, and
 *   "if I ever…" or "someday" a chance that has not come.
 * - A bodily reaction anywhere in the sentence keeps it a report ("万一吃到花生我会休克").
 * A request to the assistant in any of them still stands ("如果明天我忘了吃药，请提醒我"): the
 * rules keep what addresses the assistant (./segments.ts).
 */
import { stripFiller, type Lang } from './text';

const EN_IF = /\b(?:if|even if|what if|suppose|supposing|assuming)\s+(?:i|we|there|my|only i)\b/iu;
// Not "could" or "might": "If I eat peanuts I could die" is an allergy, not a daydream.
const EN_UNREAL_MODAL = /\b(?:i|we)(?:'d|\s+would|\s+wouldn't)\b(?!\s+(?:like|love|prefer|rather|appreciate)\b)/iu;
/**
 * A bodily reaction in the sentence makes it a report of a real condition, whatever the mood:
 * "万一吃到花生我会休克", "if I ate shellfish I'd end up in the ER".
 */
const REAL_REACTION =
  /过敏|休克|[疹疼痛吐晕]|喘不上气|呼吸困难|急诊|住院|肾上腺素|发作|拉肚子|腹泻|呕吐|失眠|\b(?:allerg\w*|hives|rash|anaphyla\w*|epi-?pen|er|hospital|sick|throw up|vomit\w*|migraine|headache|pain|hurts?|swell\w*|asthma|bloated|cramp\w*|can't breathe|insomnia|seizure)\b/iu;
const EN_IMAGINE = /^(?:honestly,?\s+|tbh,?\s+|man,?\s+|ugh,?\s+)?(?:imagine|picture|pretend|suppose|in (?:some|another|a) (?:parallel|alternate|other|different) (?:universe|world|life)|in another life|if only)\b/iu;
const EN_IF_I_WERE_YOU = /\bif i were you\b|\bif i was you\b|\bin your (?:shoes|place)\b/iu;
/** A sentence right after a hypothetical that goes on imagining ("Imagine I lived in Tokyo. I'd…"). */
const EN_GOES_ON = /^(?:and\s+|then\s+|so\s+)?(?:i'd|i would|we'd|we would|it'd|it would|that'd|that would|would)\b(?!\s+(?:like|love|prefer|rather|appreciate)\b)/iu;

const ZH_OPENER =
  /^(?:假如|假设|假使|倘若|万一|要不是|早知道|想象一下|想象(?!力)|幻想一下|设想一下|下辈子|如果当初|要是当初|当初要是|当初如果|(?:如果|要是)(?:哪天|有一天|有朝一日)|哪天我?(?:要是|如果)|如果能|要是能|(?:如果|要是)(?:我是|我能|我也能|我再))/u;
/** A bare conditional anywhere in the sentence ("明天要是下雨…"); the openers above are not bare. */
const ZH_BARE_IF = /如果|要是/u;
/** Guessing the outcome: not "肯定" / "一定", which a habit is sure of ("要是熬夜，第二天我肯定头疼"). */
const ZH_GUESS = /估计|大概|说不定|没准|八成|多半|兴许|或许|应该会|可能会/u;
/** Coming to have what one has not: "如果我养了只柯基", "要是我买了辆车", "要是中了彩票", "要是我有钱". */
const ZH_COMES_TO_HAVE = /(?:如果|要是)我?(?:真的?)?(?:[养买有生换搬租找娶嫁赢]了一?[只条个辆台套间位匹份]|中了|发财|暴富|有钱)/u;
/** A wish ("要是我会弹钢琴就好了") or a day that may never come ("如果将来有机会…"). */
const ZH_WISH_OR_SOMEDAY = /就好了|该多好|多好|哪天|有一天|有朝一日|将来|有机会/u;
/** One coming day or span, named as such. */
const ZH_ONE_DAY = /明天|后天|明早|明晚|今晚|今天晚上|下周|下星期|下礼拜|下个月|明年|这周末|这个周末/u;
const EN_ANY_IF = /\b(?:if|unless)\b/iu;
const EN_ONE_DAY = /\b(?:tomorrow|tonight|next (?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|this (?:weekend|evening|friday|saturday|sunday))\b/iu;
/** "If I ever…", "…someday": a chance that has not come, not a habit. */
const EN_SOMEDAY = /\bif (?:i|we) ever\b|\b(?:someday|some day|one day)\b/iu;

const ZH_IF_I_WERE_YOU = /(?:如果|要是|假如|换做|换成|换了)我是你|我要是你/u;
const ZH_GOES_ON = /^(?:那我|我就|那就|那肯定|肯定|应该会|估计|大概|说不定)/u;

/**
 * True when `sentence` (one sentence, fillers allowed) imagines rather than reports. Both
 * languages' markers apply, since users mix them ("如果我是你 I'd…").
 */
export function isHypothetical(sentence: string, lang: Lang): boolean {
  const body = stripFiller(sentence, lang).text.trim();
  if (REAL_REACTION.test(body)) return false;
  if (ZH_OPENER.test(body) || EN_IMAGINE.test(body) || isAdviceAsIfAssistant(body)) return true;
  if (ZH_BARE_IF.test(body) && (ZH_GUESS.test(body) || ZH_COMES_TO_HAVE.test(body) || ZH_WISH_OR_SOMEDAY.test(body) || ZH_ONE_DAY.test(body))) return true;
  if (EN_ANY_IF.test(body) && (EN_ONE_DAY.test(body) || EN_SOMEDAY.test(body))) return true;
  const cond = EN_IF.exec(body);
  return cond !== null && EN_UNREAL_MODAL.test(body.slice(cond.index + cond[0].length));
}

/** True when `sentence` continues the hypothetical of the sentence before it. */
function continuesHypothetical(sentence: string, lang: Lang): boolean {
  const body = stripFiller(sentence, lang).text.trim();
  return EN_GOES_ON.test(body) || ZH_GOES_ON.test(body);
}

/**
 * For each sentence of a message, whether it is imagined: a hypothetical itself, or one that goes
 * on imagining right after one. The rules and the net's statement selection both ask this.
 */
export function imaginedSentences(sentences: readonly { text: string }[], lang: Lang): boolean[] {
  let imagining = false;
  return sentences.map((sentence) => (imagining = isHypothetical(sentence.text, lang) || (imagining && continuesHypothetical(sentence.text, lang))));
}

/** "If I were you…" is advice to the assistant, not an instruction it should keep. */
export function isAdviceAsIfAssistant(sentence: string): boolean {
  return EN_IF_I_WERE_YOU.test(sentence) || ZH_IF_I_WERE_YOU.test(sentence);
}
