/**
 * Resolution statements: the user says a problem is over ("打印机修好了", "膝盖不疼了", "电脑不再
 * 死机了", "the printer works again", "my headaches went away", "I fixed it"). Such a clause
 * becomes a candidate with intent `resolve`: the write path supersedes the matching open pain
 * point (src/core/decisions/decide.ts), so a later vague follow-up no longer surfaces a solved
 * problem.
 *
 * Recognised by the shape of the clause, not by a list of problems: a completion predicate
 * (fixed / solved / gone / back to normal / 修好 / 解决 / 恢复正常 / 没事 …), a cessation of a
 * symptom-like verb ("不再X了", "不疼了", "no longer crashes", "doesn't hurt anymore", "the noise
 * stopped"), or a function coming back ("works again", "又能打开了"). What rules out a reading:
 * a question, a negation of the completion ("还没修好", "isn't fixed", "the fix didn't work"),
 * breakage worded the same way ("灯不亮了", "doesn't turn on anymore", "stopped working"), and a
 * problem of someone else's ("我同事的电脑修好了", "my sister's cold is gone").
 *
 * The subject is what the clause names before the predicate ("打印机", "printer"), or the symptom
 * that stopped ("疼", "crash"); empty when the clause names nothing ("修好了", "it works now"):
 * then the user means their most recent open problem.
 */
import { stripTrailing } from '../text/strip';
import type { Segmenter } from '../text/segmenter';
import type { MemoryCandidate } from '../types';
import { isAboutSomeoneElse } from './subjects';
import { EN_CONDITIONS } from './lexicon';
import { subjectWords } from './match';
import type { Lang } from './text';

export interface Resolution {
  /** The words naming what was resolved; '' when the clause names nothing. */
  subject: string;
  /** Which shape matched, for tests and debugging. */
  shape: string;
}

// ─── Chinese ────────────────────────────────────────────────────────────────────────────────────

const ZH_QUESTION = /[?？]|(?:[吗么嘛呢不]|没有?)[。！!～~]*$|怎么|如何|为什么|为啥|能不能|可不可以|是不是|有没有/u;
/** Completion predicates ("修好了", "解决了", "恢复正常"). */
const ZH_DONE =
  /(?:修好|弄好|搞好|处理好|整好|调好|治好|(?:[修搞治弄干]|解决|处理)掉|[跑调打走连]通|修复|解决|搞定|痊愈|康复|恢复正常|恢复|消失|不见|没事|没问题|好?利索|正常)(?:了|啦)?/u;
/** "X好了" counts only when X names something (a bare "好了" is "OK, enough"). */
const ZH_HEALED = /(?:已经|早就|终于|总算|都|全)?好(?:了|啦)/u;
/**
 * Symptom-like verbs whose stopping is a recovery ("不疼了", "不再死机了"); "不亮了", "不行了" are
 * breakage, and "不再吃素了", "不过敏了" change a fact (the update rules' business).
 */
export const ZH_SYMPTOM_WORDS =
  '疼|痛|痒|晕|咳嗽|咳|发烧|烧|发烫|烫|卡|卡顿|掉线|断线|漏水|漏|渗水|报错|出错|闪退|死机|蓝屏|重启|失眠|吵|闹|哭闹|哭|堵|胀|酸|麻|肿|抽筋|难受|恶心|拉肚子|流鼻血|头疼|头痛|头晕|半夜醒|醒|打呼|打鼾|掉头发|脱发|反复|发作|复发|叫';
const ZH_STOPPED = new RegExp(`(?:不再|再也不|再不|不)(?:会|怎么|那么|老|总)?(?<sym>${ZH_SYMPTOM_WORDS})(?:了|啦)`, 'u');
/** "没再X过" / "再也没X过": it has not happened since. */
const ZH_NOT_SINCE = /(?:没再|没有再|再也没有?|再没)(?<x>[^，。,.!！]{1,8}?)(?:过|了)|(?<!还)(?:没|没有)(?<x2>犯|发作|复发|出现|出过)(?:过|了)/u;
/** A function back: "又能打开了", "能用了", "可以正常上网了". */
// "现在可以吃花生了" is a change of a fact (an update rule's), not a function coming back.
const ZH_BACK = /(?:又|重新)(?:能|可以)(?<x>[^，。,.!！]{0,6}?)(?:了|啦)|(?:能|可以)(?:正常)?(?:用|使用|运行|工作|上网|打开)(?:了|啦)/u;
/** "(问题/疼痛)没了": only when what is gone is a problem word. */
const ZH_GONE = /(?<x>问题|毛病|症状|疼痛|[疼痛痒]|报错|错误|故障|bug|异常)(?:已经|都|全)?(?:没了|没有了)/iu;
/** A negation right before a completion: "还没修好", "没解决", "并未恢复". */
const ZH_NEGATED = /[没沒未不别]有?能?$/u;
/** A fix only waited for, hoped for or supposed: "等修好了再说", "希望能好". */
const ZH_PENDING = /^(?:等|等到|如果|要是|假如|希望|但愿|盼着|只要)|再说$|的话/u;
/**
 * A measure of health back under control ("血糖降下来了", "血压控制住了", "尿酸稳定了"): only a measure
 * the body has, so "房价降下来了" says nothing about the user.
 */
const ZH_MEASURE = '血压|血糖|血脂|尿酸|胆固醇|体温|心率|转氨酶|甲功|指标|炎症';
const ZH_CONTROLLED = new RegExp(`(?<x>${ZH_MEASURE})[^，。,.!！]{0,4}?(?:降下来|降下去|降回|回落|控制住|控制下来|稳住|稳定(?:下来)?|平稳)(?:了|啦)`, 'u');
/**
 * A treatment no longer needed ("不用再打胰岛素", "现在不用吃药了", "拐杖也扔了"): the problem it
 * treated is over. Only treatments: "不用再加班了" ends no illness.
 */
const ZH_TREATMENT = '药|针|胰岛素|激素|理疗|透析|拐杖|拐|护具|护腰|吸入器|喷雾|呼吸机|治疗|复健|康复训练|输液|打点滴';
const ZH_NO_TREATMENT = new RegExp(`(?:不用|不需要|不必|用不着|停了|停掉了)再?[吃打服用上戴拄做去]?[^，。,.!！]{0,4}?(?:${ZH_TREATMENT})`, 'u');
/** Words that refer back without naming anything. */
const ZH_VAGUE = /^(?:那个|这个|那件事|这件事|那事|这事|[它都的那这了也就还又]|问题|毛病|情况|一切|全部|现在|已经|终于|总算|我|之前|上次|报错)+$/u;

function zhSubject(before: string, segmenter: Segmenter): string {
  const pre = stripTrailing(before, /(?:已经|早就|终于|总算|现在|目前|[都全也就又]|基本|完全|彻底)$/u, 2).replace(/的?(?:问题|毛病|情况|事情?)$/u, '').trim();
  if (pre.length === 0 || ZH_VAGUE.test(pre)) return '';
  // A one-character thing ("车", "牙") is below the keyword extractor's length: keep it as said.
  return subjectWords(pre, 'zh', segmenter) || pre.replace(/^(?:我们的?|我的?)/u, '');
}

function detectZh(clause: string, segmenter: Segmenter): Resolution | null {
  if (ZH_QUESTION.test(clause) || ZH_PENDING.test(clause)) return null;
  const stopped = ZH_STOPPED.exec(clause);
  if (stopped) {
    const own = zhSubject(clause.slice(0, stopped.index), segmenter);
    return { subject: own || (stopped.groups?.['sym'] ?? ''), shape: 'zh.stopped' };
  }
  const since = ZH_NOT_SINCE.exec(clause);
  if (since) {
    const own = zhSubject(clause.slice(0, since.index).replace(/^(?:最近|这几天|这段时间|后来)/u, ''), segmenter);
    return { subject: own || subjectWords(since.groups?.['x'] ?? '', 'zh', segmenter) || (since.groups?.['x2'] ?? ''), shape: 'zh.not_since' };
  }
  const controlled = ZH_CONTROLLED.exec(clause);
  if (controlled && !ZH_NEGATED.test(clause.slice(0, controlled.index + controlled[0].length).replace(/(?:降下来|降下去|降回|回落|控制住|控制下来|稳住|稳定(?:下来)?|平稳)(?:了|啦)$/u, ''))) {
    return { subject: controlled.groups?.['x'] ?? '', shape: 'zh.controlled' };
  }
  const noTreatment = ZH_NO_TREATMENT.exec(clause);
  if (noTreatment && !/(?:仍然?|依然|[还得要])$/u.test(clause.slice(0, noTreatment.index))) {
    return { subject: zhSubject(stripTrailing(clause.slice(0, noTreatment.index), /(?:医生说|大夫说|现在|已经)$/u, 3), segmenter), shape: 'zh.no_treatment' };
  }
  const gone = ZH_GONE.exec(clause);
  if (gone) return { subject: zhSubject(clause.slice(0, gone.index), segmenter) || (/问题|毛病|症状|错误|故障|异常/u.test(gone.groups?.['x'] ?? '') ? '' : (gone.groups?.['x'] ?? '')), shape: 'zh.gone' };
  const done = ZH_DONE.exec(clause);
  if (done && !ZH_NEGATED.test(clause.slice(0, done.index))) return { subject: zhSubject(clause.slice(0, done.index), segmenter), shape: 'zh.done' };
  const back = ZH_BACK.exec(clause);
  if (back && !ZH_NEGATED.test(clause.slice(0, back.index))) return { subject: zhSubject(clause.slice(0, back.index), segmenter), shape: 'zh.back' };
  const healed = ZH_HEALED.exec(clause);
  if (healed && !/好(?:了|啦).+/u.test(clause.slice(healed.index))) {
    const subject = zhSubject(clause.slice(0, healed.index), segmenter);
    if (subject && !ZH_NEGATED.test(clause.slice(0, healed.index))) return { subject, shape: 'zh.healed' };
  }
  return null;
}

// ─── English ────────────────────────────────────────────────────────────────────────────────────

const EN_QUESTION = /\?\s*$|^(?:is|are|was|were|did|does|do|can|could|has|have|how|what|why|when|will|would|should)\b/iu;
/** Symptom-like verbs and nouns: their stopping is a recovery ("no longer crashes", "the noise stopped"). */
export const EN_SYMPTOM_WORDS =
  'hurt|hurts|hurting|ache|aches|aching|crash|crashes|crashing|freeze|freezes|freezing|lag|lags|lagging|jam|jams|jamming|leak|leaks|leaking|itch|itches|itching|flicker|flickers|flickering|overheat|overheats|overheating|disconnect|disconnects|disconnecting|drop|drops|dropping|fail|fails|failing|bother|bothers|bothering|wake|wakes|waking|bark|barks|barking|beep|beeps|beeping|stutter|stutters|stuttering|hang|hangs|hanging|time out|times out|timing out|throw|throws|throwing|error|errors|erroring|cough|coughing|bleed|bleeds|bleeding|swell|swelling|buzz|buzzing|rattle|rattling|squeak|squeaking|snore|snoring|noise|noises|pain|jams|rash|headache|headaches|migraine|migraines|timeouts|crashes|errors|get|have|suffer from';
const EN_NO_LONGER = new RegExp(`\\b(?:no longer|doesn't|don't|does not|do not|isn't|aren't|won't|never)\\s+(?:\\w+\\s+)?(?<x>(?:${EN_SYMPTOM_WORDS})\\b[^.,;!]*?)(?<!\\s)\\s*(?:anymore|any more|any longer|$)`, 'iu');
const EN_NO_ISSUES = /\bno\s+(?:more\s+)?(?:issues|problems|trouble|errors|crashes|complaints)\s+(?:with\s+(?<x>\S+(?:\s+\S+)*?)\s+)?(?:since|after|anymore|any more)\b/iu;
const EN_NO_MORE = /\bno more\s+(?<x>[\w-]+(?:\s+(?!since\b|after\b|now\b|today\b|lately\b)[\w-]+)?)/iu;
const EN_NOT_SINCE = /\b(?:haven't|have not|hasn't|has not|didn't|did not)\s+(?:had|seen|gotten|got)\s+(?:a |an |any |the )?(?<x>[\w-]+(?:\s+[\w-]+)?)\s+since\b/iu;
/** "haven't had a migraine in months": not for a long while (a symptom or illness only, checked by the caller). */
const EN_NOT_IN_WHILE =
  /\b(?:haven't|have not|hasn't|has not)\s+(?:had|gotten|got)\s+(?:a |an |any |one )?(?<x>[\w-]+(?:\s[\w-]+)?)\s(?:in|for)\s(?:(?:over|almost|nearly|about|a few|a couple of|several|two|three|\d+|a)\s)?(?:days|weeks?|months?|years?|ages|a while|a long time|forever)\b/iu;
/** "The migraines are a thing of the past", "the back pain is behind me". */
const EN_PAST = /\b(?:is|are|'s|'re)\s(?:now\s|finally\s|all\s)?(?:a\sthing\sof\sthe\spast|behind\sme)\b/iu;
const EPISODE_WORDS: ReadonlySet<string> = new Set([
  ...EN_SYMPTOM_WORDS.split('|').filter((w) => !w.includes(' ') && !/^(?:get|have)$/u.test(w)),
  ...'attack attacks episode episodes flare-up flare-ups seizure seizures nosebleed nosebleeds cold colds fever fevers relapse relapses'.split(' '),
]);

/** A symptom, an illness or a bout of one: what "haven't had … in months" may end, and what comes back as a problem. */
export function isEpisode(text: string): boolean {
  return text.toLowerCase().split(/[^\p{L}'-]+/u).some((w) => EPISODE_WORDS.has(w)) || EN_CONDITIONS.test(text);
}
/** "is fixed / was sorted out / is gone / has healed / is back to normal". */
const EN_DONE =
  /\b(?:is|are|was|were|'s|'re|got|get|been|has|have|has been|have been)\s+(?:all\s+|finally\s+|now\s+|completely\s+|totally\s+|fully\s+|been\s+)?(?<p>fixed|resolved|solved|sorted(?:\s+out)?|gone|healed|cured|cleared\s+up|over|back\s+to\s+normal|(?:fine|ok|okay|better|normal|good|stable|quiet|smooth|clear)\s+(?:now|again|since))\b/iu;
/** "went away / cleared up / disappeared / subsided / stopped" after a subject. */
const EN_WENT = /\b(?<p>went\s+away|cleared\s+up|disappeared|subsided|calmed\s+down|eased\s+off|eased\s+up|let\s+up|died\s+down|settled\s+down|stopped)\b(?<rest>.*)/iu;
/** A function back: "works again", "is working fine now", "connects again", "passes now". */
const EN_BACK =
  /\b(?:works|working|worked|runs|running|loads|loading|connects|connecting|starts|charges|charging|prints|printing|boots|syncs|syncing|passes|passing|sleeps|sleeping|compiles|responds|opens|drains)\b(?:\s+(?:fine|normally|properly|perfectly|well|through\s+the\s+night|again))*\s+(?:again|now|fine|normally|properly|perfectly)\b/iu;
/** "the script finally runs": a function that had failed now works. */
const EN_FINALLY = /\bfinally\s+(?:works|runs|loads|connects|starts|boots|compiles|passes|prints|syncs|responds|opens|drains)\b/iu;
/** A fix only waited for, hoped for or supposed: "once it's fixed", "I wish it were fixed". */
const EN_PENDING = /\b(?:once|if|until|unless|wish|hope|hopefully|will|'ll|going to|gonna|plan to|want|would|should)\b/iu;
/** "I fixed it", "we solved the leak", "I got it working", "problem solved". */
const EN_SELF_FIXED = /\b(?:i|we)\s+(?:finally\s+|managed\s+to\s+|just\s+)?(?:fixed|solved|resolved|sorted(?:\s+out)?|repaired)\b(?<x>.*)|\bgot\s+(?:it|that|this|the\s+\w+|my\s+\w+)\s+(?:working|fixed|sorted)\b|\bproblem\s+solved\b|\bissue\s+resolved\b|\ball\s+(?:sorted|fixed)\b/iu;
const EN_NEGATED = /\b(?:not|never|nothing|no one|nobody|hardly)\b|n't\b/iu;
/** Breakage that "stopped" also words: "stopped working", "stopped charging". */
const EN_STOPPED_FUNCTION = /^\s*(?:working|charging|draining|responding|loading|printing|syncing|connecting|running|cooling|heating|turning\s+on)\b/iu;
const EN_VAGUE = new Set('i i\'m we it it\'s that this my our the a an all everything problem issue thing stuff now finally and so well ok okay yeah good'.split(' '));

function enSubject(before: string): string {
  const words = before.toLowerCase().replace(/’/gu, "'").split(/[^\p{L}\p{N}'-]+/u).filter((w) => w && !EN_VAGUE.has(w));
  return words.length === 0 ? '' : subjectWords(words.join(' '), 'en');
}

function detectEn(clause: string): Resolution | null {
  if (EN_QUESTION.test(clause) || EN_PENDING.test(clause)) return null;
  const noIssues = EN_NO_ISSUES.exec(clause);
  if (noIssues) return { subject: enSubject(noIssues.groups?.['x'] ?? ''), shape: 'en.no_issues' };
  const noLonger = EN_NO_LONGER.exec(clause);
  if (noLonger) {
    const x = (noLonger.groups?.['x'] ?? '').replace(/^(?:get|have|suffer from)\s+/iu, '');
    return { subject: enSubject(clause.slice(0, noLonger.index)) || subjectWords(x, 'en'), shape: 'en.no_longer' };
  }
  // "in months" alone is also how one complains ("I haven't had a day off in months"): only a symptom or an illness then.
  const inWhile = EN_NOT_IN_WHILE.exec(clause);
  const since = EN_NOT_SINCE.exec(clause) ?? (inWhile && isEpisode(inWhile.groups?.['x'] ?? '') ? inWhile : null);
  if (since) return { subject: subjectWords(since.groups?.['x'] ?? '', 'en'), shape: 'en.not_since' };
  const noMore = EN_NO_MORE.exec(clause);
  if (noMore) return { subject: subjectWords(noMore.groups?.['x'] ?? '', 'en'), shape: 'en.no_more' };
  const selfFixed = EN_SELF_FIXED.exec(clause);
  if (selfFixed && !EN_NEGATED.test(clause.slice(0, selfFixed.index + selfFixed[0].length))) {
    return { subject: enSubject(selfFixed.groups?.['x'] ?? ''), shape: 'en.self_fixed' };
  }
  const done = EN_DONE.exec(clause) ?? EN_PAST.exec(clause);
  if (done && !EN_NEGATED.test(clause.slice(0, done.index + done[0].length))) return { subject: enSubject(clause.slice(0, done.index)), shape: 'en.done' };
  const fin = EN_FINALLY.exec(clause);
  if (fin && !EN_NEGATED.test(clause.slice(0, fin.index + fin[0].length))) return { subject: enSubject(clause.slice(0, fin.index)), shape: 'en.finally' };
  const back = EN_BACK.exec(clause);
  if (back && !EN_NEGATED.test(clause.slice(0, back.index + back[0].length)) && !/\bfor\s+(?:my|his|her|their)\b/iu.test(clause)) {
    return { subject: enSubject(clause.slice(0, back.index)), shape: 'en.back' };
  }
  const went = EN_WENT.exec(clause);
  if (went && !EN_NEGATED.test(clause.slice(0, went.index)) && !EN_STOPPED_FUNCTION.test(went.groups?.['rest'] ?? '')) {
    const subject = enSubject(clause.slice(0, went.index));
    // "It stopped." names nothing and says little; "the noise stopped" names what stopped.
    if (subject) return { subject, shape: 'en.went' };
  }
  return null;
}

/** The resolution a clause states, or null. `clause` is one clause of a user message, fillers stripped. */
export function detectResolution(clause: string, lang: Lang, segmenter: Segmenter): Resolution | null {
  const text = clause.trim().replace(/(?<![。．.!！~～])[。．.!！~～]+$/u, '');
  if (!text) return null;
  if (!/^(?:它|it\b)/iu.test(text) && isAboutSomeoneElse(text, lang)) return null;
  if (/(?:sister|brother|mom|mother|dad|father|friend|coworker|colleague|wife|husband|son|daughter|neighbou?r|roommate|boss|partner)'s\b/iu.test(text)) return null;
  if (/(?:同事|朋友|妹妹|姐姐|哥哥|弟弟|妈妈|爸爸|老婆|老公|女儿|儿子|室友|邻居|老板|同学)的/u.test(text)) return null;
  return lang === 'zh' ? detectZh(text, segmenter) : detectEn(text);
}

/**
 * One message ends one problem per thing it names: "打印机修好了，现在能用了" and "I fixed it, it
 * works now" each say one thing twice. Per message, a resolution naming nothing is dropped beside
 * one that names its problem, and several naming nothing count once (else each would end another
 * open problem).
 */
export function oneVagueResolution(candidates: readonly MemoryCandidate[]): MemoryCandidate[] {
  const messageOf = (c: MemoryCandidate) => c.messageIds.join(',');
  const named = new Set(candidates.filter((c) => c.intent === 'resolve' && c.subject).map(messageOf));
  const vagueSeen = new Set<string>();
  return candidates.filter((c) => {
    if (c.intent !== 'resolve' || c.subject) return true;
    const m = messageOf(c);
    if (named.has(m) || vagueSeen.has(m)) return false;
    vagueSeen.add(m);
    return true;
  });
}
