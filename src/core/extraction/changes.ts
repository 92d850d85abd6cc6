/**
 * Change statements: the user says a state of theirs is new, over, or taken up again — "I'm on a
 * Pixel 8 now", "I've become a pescatarian", "From now on I'm off sugar", "I'm smoking again",
 * "烟我戒了快一年了", "我又跑起来了", "我现在十点就上床了". Before these rules many such
 * statements gave no memory at all, so the conflict resolver never saw them and the old value
 * stayed (docs/benchmarks.md, "Conflict resolver pairs").
 *
 * Read by shape, never by topic: a marker of change (now / these days / from now on / again /
 * back to / anymore / 现在 / 如今 / 又 / 重新 / 从今天起 / 戒掉 / 改掉 …) with a predicate of the
 * user's own doing or having. What a new value replaces is the resolver's business (it compares
 * the words of the two statements, src/core/decisions/); here only the statement is kept:
 * - a new value is asserted (a fact, or a preference for a daily schedule);
 * - an ended or resumed state is an `update` naming what changed (like the older update rules);
 * - a symptom that came back ("I started getting migraines again", "又开始失眠了") is a pain point.
 *
 * Not a change of the user's state, and never read as one ({@link notYet}, {@link passing}): a plan
 * or a wish ("I'm going to quit coffee", "我打算…", "真想…"), a condition not yet met ("once my knee
 * heals", "等我病好了"), a passing state ("I'm on the train right now", "我现在在高铁上", "我又饿了",
 * "又下雨了"), someone else ("My roommate started smoking again"). Questions and hypotheticals
 * never reach these rules (./segments.ts, ./hypotheticals.ts).
 *
 * These rules run after the fact rules, which keep their more specific reading ("I'm vegan now" is
 * a diet); only the lead-marker rules ({@link EN_CHANGE_FIRST}, {@link ZH_CHANGE_FIRST}) run before
 * them, because "Starting today I'm not eating sugar" would otherwise be a dated event.
 */
import { ZH_CONDITIONS } from './lexicon';
import { cleanObject, makeMatch, subjectWords, type ClauseMatch } from './match';
import { type Build, group, rule, type Rule } from './rule-kit';
import type { Segmenter } from '../text/segmenter';
import { en, fewestWords, PRE as EN_PRE, SELF as EN_SELF, SELF_BE } from './en-common';
import { zh } from './zh-common';
import { isEpisode, ZH_SYMPTOM_WORDS } from './resolution';
import { isAboutSomeoneElse } from './subjects';
import type { Lang } from './text';

// ─── Shared guards ──────────────────────────────────────────────────────────────────────────────

/** A change only planned, wished, supposed or waited for: nothing has changed yet. */
const EN_NOT_YET =
  /\b(?:will|'ll|going to|gonna|plan|plans|planning|want|wants|wanna|hope|hoping|wish|would|'d|might|may|could|should|thinking (?:of|about)|considering|about to|once|if|unless|until|try|trying|tomorrow|next (?:week|month|year)|soon|someday|one day)\b/iu;
const ZH_NOT_YET = /打算|准备|计划|想|希望|盼|但愿|要是|如果|假如|万一|考虑|可能|也许|或许|争取|^等|下个?月|下周|明年|明天|以后再|将来|早日|早点|快点/u;
/** Passing states: where one is right now, how one feels today, the weather. */
const EN_PASSING = /\b(?:right now|at the moment|for now|for today|tonight|this (?:morning|afternoon|evening))\b/iu;
const ZH_PASSING = /^我?(?:现在|刚|刚刚|正)?在|[饿累困忙渴烦]了?$|今天|今晚|刚才/u;
/** The weather changes, the user does not: "又开始下雨了", "天又冷起来了". */
export const ZH_WEATHER = /^天|天气|下雨|下雪|刮风|雾霾|降温|升温|[冷热]起来/u;

/** A question without its question mark ("现在用的是哪个版本"). */
const ZH_ASKS = /[哪谁吗呢]|什么|多少|怎么/u;
/** Knowing, seeing, feeling: a remark about the conversation, not a state ("I see your point now", "以后我就知道了"). */
const EN_MIND = /^(?:(?:\w+ly|kind of|sort of)\s+)*(?:see|get|understand|know|remember|think|guess|feel|wonder|realize|realise|owe|regret|agree|mean|believe|suppose|doubt|bet|appreciate|admit|promise|swear|apologi[sz]e|thank|hope|wish|miss|trust|care|need|have to|had to|gotta|got to|must|want|can|cannot|can't|am|was|were|is|are)\b/iu;
const ZH_MIND = /知道|明白|懂|记住|记得|注意|理解|清楚/u;

/** True when the clause tells a state that has not changed yet, or changes only for a moment. */
function notYet(clause: string, lang: Lang): boolean {
  return lang === 'zh' ? ZH_NOT_YET.test(clause) : EN_NOT_YET.test(clause);
}
function passing(clause: string, lang: Lang): boolean {
  return lang === 'zh' ? ZH_PASSING.test(clause.replace(/^(?:从今天(?:起|开始)|今天起)/u, '')) || ZH_WEATHER.test(clause) : EN_PASSING.test(clause);
}

/** Wraps a build: the clause must be the user's own, settled, lasting change. */
function settled(lang: Lang, build: Build): Build {
  return (m, clause, segmenter) =>
    notYet(clause, lang) || passing(clause, lang) || isAboutSomeoneElse(clause, lang) || (lang === 'zh' && ZH_ASKS.test(clause)) ? null : build(m, clause, segmenter);
}

const ZH_SYMPTOM = new RegExp(`(?:${ZH_SYMPTOM_WORDS})`, 'u');

/** An ended or resumed state: an update naming what changed, or a plain fact when nothing is named. */
function changed(id: string, what: string, lang: Lang, relation: string, segmenter?: Segmenter): ClauseMatch | null {
  const target = cleanObject(what, lang);
  if (!target) return null;
  const subject = lang === 'zh' ? subjectWords(target, 'zh', segmenter!) : subjectWords(target, 'en');
  if (!subject) return makeMatch(id, { type: 'fact', confidence: 0.85, relation, target });
  return makeMatch(id, { type: 'fact', intent: 'update', confidence: 0.85, relation, target, subject });
}

/** Something taken up again: a symptom that came back is a problem, anything else a changed state. */
function resumed(id: string, what: string, lang: Lang, segmenter?: Segmenter): ClauseMatch | null {
  const symptom = lang === 'zh' ? ZH_SYMPTOM.test(what) || ZH_CONDITIONS.test(what) : isEpisode(what);
  if (symptom) return makeMatch(id, { type: 'pain_point', confidence: 0.85, relation: 'struggles_with', target: cleanObject(what, lang) });
  return changed(id, what, lang, 'does', segmenter);
}

// ─── English ────────────────────────────────────────────────────────────────────────────────────

/**
 * One optional opener before the subject. The fact rules' longer adverbial prefix, repeated, makes
 * these patterns backtrack super-linearly (test/regex-safety.test.ts), so a change rule takes one.
 */
const EN_LEAD_IN = "(?:(?:so|and|but|also|actually|well|anyway|btw|fyi|oh|ok|okay)[,\\s]+)?";

/** Markers that a new state starts now: "from now on", "starting today", "as of this week". */
const EN_LEAD = '(?:from now on|starting (?:today|now|this (?:week|month|year))|as of (?:today|now|this (?:week|month|year))|beginning (?:today|this (?:week|month)))';
/** What an ended state says before its object: "I'm off", "I'm not eating", "I've cut out". */
const EN_ENDED_HEAD =
  /^(?:i'm|i am|we're|we are|i|we)(?:'ve|\s+have)?\s+(?:completely\s+|totally\s+|officially\s+)?(?:off|done with|not\s+\w+ing|no longer\s+\w+|don't\s+\w+|do not\s+\w+|never\s+\w+|quit|stopped|gave up|given up|cut out|kicked)\s+(?:any\s+|all\s+)?/iu;
/** Diets and abstinences one "goes" ("I went vegan", "going fully keto"): a state, not a trip. */
const EN_GONE_STATE = 'vegan|vegetarian|pescatarian|pescetarian|keto|paleo|plant-based|gluten-free|dairy-free|sober|teetotal|carnivore|flexitarian|sugar-free|alcohol-free|cold turkey';
/** Momentary doings that "again" makes no new state of ("I'm crying again", "running late again"). */
const EN_MOMENTARY = /^(?:crying|laughing|thinking|wondering|waiting|kidding|joking|rambling|asking|talking|typing|messaging|texting|running late|late|rethinking|overthinking|reading (?:this|that|it)|looking)\b/iu;
/** Words of one clause before its marker ("started running again"): never across a comma or semicolon. */
const CLAUSE_WORDS = fewestWords('[^\\s,;]', '\\s');
const EN_ADVERB_TAIL = /(?<!\s)\s+(?:completely|entirely|altogether|totally|for good|for real|now|these days|nowadays|anymore|any more|any longer)$/iu;

function enObject(raw: string): string {
  let s = raw.trim();
  for (let i = 0; i < 3; i += 1) s = s.replace(EN_ADVERB_TAIL, '');
  return s;
}

/** Before the fact rules: a lead marker would otherwise make a dated event ("Starting today…"). */
export const EN_CHANGE_FIRST: readonly Rule[] = [
  rule('en.change.lead', en(`^${EN_LEAD}[,\\s]+(?<body>(?:i|i'm|i've|we|we're|we've)\\b.+)$`), (m, clause) => {
    const body = group(m, 'body');
    if ((notYet(body, 'en') && !/\bgoing\s+(?:fully\s+|full\s+|completely\s+|100%\s+)?(?:vegan|vegetarian|keto)/iu.test(body)) || isAboutSomeoneElse(clause, 'en')) return null;
    const ended = EN_ENDED_HEAD.exec(body);
    if (ended) return changed('en.change.lead', enObject(body.slice(ended[0].length)), 'en', 'quit');
    return makeMatch('en.change.lead', { type: 'fact', confidence: 0.85, relation: 'does', target: cleanObject(body, 'en') });
  }),
];

/** After the fact rules: a change they did not read. */
export const EN_CHANGE_RULES: readonly Rule[] = [
  // "I've become a pescatarian", "I went vegan", "I'm going fully keto".
  // Become a kind of person, not a passing feeling ("I've become really tired").
  rule('en.change.become', en(`${EN_SELF}(?:have\\s+|'ve\\s+)?(?:become|turned into)\\s+(?:an?\\s+(?<obj>[\\w -]+)|(?<obj2>${EN_GONE_STATE})\\b)`), settled('en', (m) =>
    makeMatch('en.change.become', { type: 'fact', confidence: 0.85, relation: 'is', target: cleanObject(group(m) || group(m, 'obj2'), 'en') }),
  )),
  rule('en.change.gone', en(`^${EN_PRE}(?:i|we|i'm|we're)(?:'ve|\\s+have|\\s+am|\\s+are)?\\s+(?:just\\s+|recently\\s+|finally\\s+|officially\\s+)?(?:gone|went|going|turned)\\s+(?:fully\\s+|full\\s+|completely\\s+|totally\\s+|100%\\s+)?(?<obj>${EN_GONE_STATE})\\b`), (m, clause) =>
    // "going vegan" is doing it now; "going to go vegan" never reaches here (no state word after "going").
    /\b(?:next|tomorrow|soon|someday|once|if|wish|want|plan|thinking|considering)\b/iu.test(clause) || isAboutSomeoneElse(clause, 'en')
      ? null
      : makeMatch('en.change.gone', { type: 'fact', confidence: 0.85, importance: 0.7, relation: 'diet', target: group(m).toLowerCase() }),
  ),
  // Taken up again: "I'm smoking again", "I started eating meat again", "I picked the guitar back up", "I've gone back to practicing".
  rule('en.change.again.ing', en(`${SELF_BE}(?<obj>[a-z]+ing\\b[^\\s,;]*(?:\\s+[^\\s,;]+)*?)\\s+again\\b`), settled('en', (m) =>
    EN_MOMENTARY.test(group(m)) ? null : resumed('en.change.again', group(m), 'en'),
  )),
  rule('en.change.again.started', en(`${EN_SELF}(?:have\\s+|'ve\\s+)?(?:started|begun|began|taken up|took up|resumed|picked up)\\s+(?<obj>${CLAUSE_WORDS})\\s+again\\b`), settled('en', (m) =>
    EN_MOMENTARY.test(group(m)) ? null : resumed('en.change.again', group(m).replace(/^to\s+/iu, ''), 'en'),
  )),
  rule('en.change.again.back', en(`(?:${EN_SELF}(?:have\\s+|'ve\\s+)?(?:gone|went|got|gotten)\\s+back\\s+(?:to|into)|${SELF_BE}back\\s+(?:to|into))\\s+(?<obj>[a-z]+ing\\b.*)|${EN_SELF}(?:have\\s+|'ve\\s+)?picked\\s+(?<obj2>${CLAUSE_WORDS})\\s+back\\s+up\\b`), settled('en', (m) =>
    resumed('en.change.again', group(m) || group(m, 'obj2'), 'en'),
  )),
  // Ended: "I'm off Instagram for good", "I'm done with alcohol", "not a smoker anymore", "I've cut out sugar", "sold the Corolla".
  rule('en.change.off', en(`${SELF_BE}(?:completely\\s+|totally\\s+|officially\\s+)?(?:off|done with|through with)\\s+(?<obj>\\S.*)`), settled('en', (m) => {
    const what = group(m);
    if (/^(?:work|duty|today|tomorrow|to\b|for\b|now\b|sick|this|that|these|those|it\b|the\b|my\b|here\b)/iu.test(what)) return null;
    return changed('en.change.off', enObject(what), 'en', 'quit');
  })),
  rule('en.change.notanymore', en('^(?:not|no longer)\\s+(?:an?\\s+)?(?<obj>[\\w-]+(?:\\s+[\\w-]+){0,3}?)\\s+(?:anymore|any more|any longer)\\b'), settled('en', (m) =>
    /^(?:hungry|tired|sleepy|sure|busy|bored|mad|angry|upset|sad|awake|here|there|home|around|online|available|free|that|so)\b/iu.test(group(m)) ? null : changed('en.change.notanymore', group(m), 'en', 'quit'),
  )),
  rule('en.change.rid', en(`^${EN_LEAD_IN}(?:(?:i|we)(?:'ve|\\s+have)?\\s+)?(?:just\\s+|finally\\s+|recently\\s+)?(?:cut out|ditched|got rid of|gotten rid of|sold|kicked)\\s+(?<obj>\\S.*)`), settled('en', (m) =>
    /^(?:it|that|this|them)\b/iu.test(group(m)) ? null : changed('en.change.rid', enObject(group(m).replace(/(?<!\s)\s+(?:a|last|this)\s+\w+(?:\s+ago)?$/iu, '')), 'en', 'quit'),
  )),
  // A bond made or ended: "Anna and I broke up", "we got married last year".
  rule('en.change.bond', en(`^${EN_LEAD_IN}(?:(?:[a-z]+|my\\s+[a-z]+)\\s+and\\s+i|i|we)\\s+(?:just\\s+|finally\\s+|recently\\s+)?(?<obj>broke up|split up|got married|got engaged|got divorced|separated|married)\\b`), settled('en', (m) =>
    makeMatch('en.change.bond', { type: 'fact', confidence: 0.85, relation: 'marital_status', target: group(m).toLowerCase() }),
  )),
  // Switched without naming the old: "switched to neovim", "I moved over to Zed for all my coding".
  rule('en.change.switched', en(`^${EN_PRE}(?:(?:i|we)(?:'ve|\\s+have)?\\s+)?(?:just\\s+|recently\\s+|finally\\s+|fully\\s+)?(?:switched|moved over|changed over|migrated|went over|converted|am switching|'m switching)\\s+(?:over\\s+)?to\\s+(?<obj>\\S.*)`), settled('en', (m) =>
    makeMatch('en.change.switched', { type: 'fact', confidence: 0.85, relation: 'uses', target: cleanObject(group(m), 'en') }),
  )),
  // "I'm on an iPhone 15 now": on a named thing (a make, a model, a system), not "on the train".
  rule('en.change.on', en(`${SELF_BE}(?:on|using|running)\\s+(?:an?\\s+|the\\s+)?(?<obj>[\\w.+#-]+(?:\\s+[\\w.+#-]+){0,3}?)\\s+(?:now|these days|nowadays)$`), settled('en', (m) =>
    /[A-Z]/u.test(group(m)) ? makeMatch('en.change.on', { type: 'fact', confidence: 0.85, relation: 'uses', target: group(m) }) : null,
  )),
  // "Zed is my editor these days", "obsidian is my thing now".
  rule('en.change.ismy', en(`^${EN_PRE}(?<x>[\\w.+#-]+(?:\\s+[\\w.+#-]+){0,3}?)\\s+(?:is|are)\\s+(?:now\\s+)?my\\s+(?:new\\s+|current\\s+|main\\s+|go-to\\s+)?(?<what>[\\w-]+(?:\\s+[\\w-]+){0,2}?)(?:\\s+(?:now|these days|nowadays))?$`), settled('en', (m, clause) => {
    if (!/\b(?:now|these days|nowadays|new|current)\b/iu.test(clause) || /^(?:it|this|that|there|what|who|he|she|they|which)$/iu.test(group(m, 'x'))) return null;
    return makeMatch('en.change.ismy', { type: 'fact', confidence: 0.8, relation: cleanObject(group(m, 'what'), 'en').toLowerCase(), target: group(m, 'x') });
  })),
  // A new job, said with or without the subject: "Got a new job at Stripe", "I started a new role".
  rule('en.change.job', en(`^${EN_LEAD_IN}(?:(?:i|we)(?:'ve|\\s+have)?\\s+)?(?:just\\s+|finally\\s+|recently\\s+)?(?:got|started|landed|took|accepted)\\s+(?:a\\s+)?new\\s+(?:job|role|position|gig)\\b`), settled('en', () =>
    makeMatch('en.change.job', { type: 'fact', intent: 'update', confidence: 0.85, subject: 'job' }),
  )),
  // A doing that is now the user's way, in the progressive: "I'm working from home full-time now", "I'm cooking vegan these days".
  rule('en.change.doing', en(`${SELF_BE}(?<obj>[a-z]+ing\\s[^,;]*?)\\s(?:these days|nowadays|(?:full-time|part-time|exclusively|remotely|for good)\\s+now)$`), settled('en', (m) =>
    EN_MOMENTARY.test(group(m)) ? null : makeMatch('en.change.doing', { type: 'fact', confidence: 0.8, relation: 'does', target: cleanObject(group(m), 'en') }),
  )),
  // "I eat fish but no other meat now", "I get around by e-bike now", "I get up at 5:30 now".
  rule('en.change.now', en(`^${EN_LEAD_IN}(?:i|we)\\s(?:(?:also|just|really|only|mostly|actually)\\s)?(?<obj>[a-z][\\w'-]*\\s[^,;]*?)\\s(?:now|these days|nowadays)$`), settled('en', (m) => {
    const what = group(m);
    // A remark about the conversation ("I owe you one now", "I wonder what happens now") is no state.
    if (EN_MIND.test(what) || /\b(?:you|your|what|why|how|whether)\b/iu.test(what)) return null;
    return makeMatch('en.change.now', { type: 'fact', confidence: 0.8, relation: 'does', target: cleanObject(what, 'en') });
  })),
];

// ─── Chinese ────────────────────────────────────────────────────────────────────────────────────

/** Markers that a new state starts now: "从今天起", "从现在开始", "以后我…了" (a state, not a plan). */
const ZH_LEAD = '(?:从(?:今天|今儿|现在|本周|这周|这个月|今年)(?:起|开始)|今天起|即日起|以后|今后|往后)';
const ZH_ENDED = /(?:不再|再也不|戒掉|[不没戒停])(?<obj>[^，,了]{1,8})了?$/u;

export const ZH_CHANGE_FIRST: readonly Rule[] = [
  rule('zh.change.lead', zh(`^${ZH_LEAD}[，,\\s]*(?<body>(?:我|咱)[^，,]*了)$`), (m, clause, segmenter) => {
    const body = group(m, 'body');
    if (notYet(body, 'zh') || /[要会得该]|争取|尽量/u.test(body) || ZH_MIND.test(body) || isAboutSomeoneElse(clause, 'zh')) return null;
    const ended = ZH_ENDED.exec(body);
    if (ended) return changed('zh.change.lead', (ended.groups?.['obj'] ?? '').replace(/^[都也就]/u, ''), 'zh', 'quit', segmenter);
    // After "以后" a new state is a habit ("以后我都自己做饭了"); anything else is a remark ("以后我们再聊").
    if (/^(?:以后|今后|往后)/u.test(clause) && !/[都每天]/u.test(body)) return null;
    return makeMatch('zh.change.lead', { type: 'fact', confidence: 0.85, relation: 'does', target: cleanObject(body, 'zh') });
  }),
  // Before the habit rules, which read "这个习惯我改掉了" as a habit.
  // Quit, with the thing said first: "烟我戒了快一年了", "熬夜这个习惯我已经改掉了".
  rule('zh.change.quit', zh('^(?<obj>[^，,我]{1,8}?)(?:这个|这)?(?:习惯|毛病)?(?:我|我们)?(?:已经|早就|早|都|总算|终于)?(?<verb>戒掉|改掉|戒)了'), settled('zh', (m, clause, segmenter) => {
    // "bug我已经改掉了" fixes a bug; only a habit is "改掉".
    if (group(m, 'verb') === '改掉' && !/习惯|毛病/u.test(clause)) return null;
    const what = group(m).replace(/(?:这个|这)$/u, '');
    return what ? changed('zh.change.quit', what, 'zh', 'quit', segmenter) : null;
  })),
  // Not even a little any more: "我现在一根烟都不碰了", "酒一滴都不沾了", "我滴酒不沾了".
  rule('zh.change.none', zh(`^[^，,]{0,8}?(?:一(?:[根口滴点块支杯次]|点儿)(?<obj>[^，,都]{1,6})(?:都|也)不(?:再)?[碰沾吃喝抽用]|(?<obj2>[^，,]{1,4}?)(?:都|也)?不沾)了?$`), settled('zh', (m, _clause, segmenter) =>
    changed('zh.change.none', (group(m) || group(m, 'obj2')).replace(/我|一[根口滴点块支杯次]/gu, ''), 'zh', 'quit', segmenter),
  )),
  // Married, divorced, broke up (a lasting status even when dated, so before the event rules): "我去年结婚了", "我们分手了".
  rule('zh.change.bond', zh(`^(?:我|我们|我和[^，,]{1,4}|我跟[^，,]{1,4})(?:去年|前年|上个月|上周|前阵子|前段时间|刚|刚刚|已经|终于)?(?<obj>结婚|离婚|分手|订婚|领证)了`), settled('zh', (m) =>
    makeMatch('zh.change.bond', { type: 'fact', confidence: 0.85, relation: 'marital_status', target: group(m) }),
  )),
];

export const ZH_CHANGE_RULES: readonly Rule[] = [
  // Taken up again: "现在重新开始跑步了", "最近又跑起来了", "咖啡我重新喝起来了".
  rule('zh.change.again', zh(`^(?<topic>[^，,]{0,8}?)(?:我|我们)?(?:现在|最近|如今|这阵子)?(?:又|重新|再次)(?:开始)?(?<obj>[^，,了]{1,8}?)(?:起来|上)?了`), settled('zh', (m, clause, segmenter) => {
    const what = group(m);
    // A bare "又X了" is a moment ("又饿了"), "重新装了系统" one redo; a resumption says 开始, 起来 or 上.
    if (!/开始|起来|上了/u.test(clause) || /^开始$/u.test(what)) return null;
    const topic = group(m, 'topic').replace(/^(?:停了[^，,]*|最近|现在)/u, '');
    return resumed('zh.change.again', `${topic}${what}`, 'zh', segmenter);
  })),
  // Changed to another way of doing: "我现在改喝茶了", "最近改走路上班了" (not "改了一下代码").
  rule('zh.change.gai', zh('^[^，,]{0,6}?(?:现在|最近|如今|已经|后来|这阵子)?改(?<obj>[吃喝用骑坐开走跑住穿戴听看练玩][^，,]{0,10}?)了?$'), settled('zh', (m) =>
    makeMatch('zh.change.gai', { type: 'fact', confidence: 0.85, relation: 'does', target: cleanObject(group(m), 'zh') }),
  )),
  // No longer done, said after a span or a subject the update rules do not take: "我这两年都不喝奶茶了".
  rule('zh.change.nomore', zh('^[^，,]{0,8}?(?:都|也|已经|早就)不再?(?<obj>[吃喝抽用玩碰看去坐开熬][^，,了]{1,8})了$'), settled('zh', (m, _clause, segmenter) =>
    changed('zh.change.nomore', group(m), 'zh', 'quit', segmenter),
  )),
  // What one now uses, rides or lives in, said as "现在用的是…": "我现在用的是小米手机".
  rule('zh.change.nowis', zh(`^[^，,]{0,6}?(?:现在|如今|目前|这阵子)[^，,]{0,4}?(?<verb>用|开|骑|住|戴|喝|吃|抽|穿|坐)的(?:都是|是)(?<obj>[^，,]+)`), settled('zh', (m) =>
    makeMatch('zh.change.nowis', { type: 'fact', confidence: 0.85, relation: group(m, 'verb') === '用' ? 'uses' : 'does', target: cleanObject(group(m), 'zh') }),
  )),
  // A schedule that changed: "我现在十点就上床了", "如今六点就起床".
  rule('zh.change.schedule', zh(`^[^，,]{0,6}?(?:现在|如今|目前|这阵子)[^，,]{0,4}?(?<time>[\\d一二三四五六七八九十两]{1,3}点(?:半|多|钟)?)(?:前|左右)?(?:就|才)?(?<obj>睡觉|睡|上床|起床|起|醒|下班|出门)`), settled('zh', (m) =>
    makeMatch('zh.change.schedule', { type: 'preference', confidence: 0.85, relation: 'habit', target: `${group(m, 'time')}${group(m)}` }),
  )),
];


// ─── Changes not yet made ───────────────────────────────────────────────────────────────────────

const EN_UNMET = /\b(?:i'll|i will|we'll|we will|going to|gonna|plan(?:ning)? to|hope to|hoping to|wish|i'd love to|would love to|can't wait|once|next (?:week|month|year))\b/iu;
const ZH_UNMET = /就好了|该多好|^盼|盼着|但愿|希望|打算|准备|计划|^等(?!不及)|(?:如果|要是)[^，,。]{0,8}好了/u;

/**
 * A change only planned, wished or waited for ("Next month I'll try cutting out coffee",
 * "盼着腰伤早点好", "等我病好了就去海边"): at most a goal, never a state the user is in.
 */
export function isUnmetChange(text: string, lang: Lang): boolean {
  return lang === 'zh' ? ZH_UNMET.test(text) : EN_UNMET.test(text);
}
