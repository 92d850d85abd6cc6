/**
 * What a clause rule reports, and the helpers rules share: object clean-up, subject words of an
 * update, hedges, task scope and base importance per type.
 */
import { memoryTypeTable } from '../memory-types';
import { stripTrailing } from '../text/strip';
import type { Segmenter } from '../text/segmenter';
import type { MemoryCandidate, MemoryType, RelationRef } from '../types';
import { EN_STOPWORDS, ZH_STOPWORDS } from './lexicon';
import { extractKeywords } from './keywords';
import type { Lang } from './text';

/** What a candidate does to existing memories. */
export type Intent = MemoryCandidate['intent'];

/** The verdict of one clause rule. */
export interface ClauseMatch {
  /** Rule id, for tests and debugging. */
  rule: string;
  type: MemoryType;
  intent: Intent;
  /** Base confidence: clear first-person statements ≥ 0.8, weak desires lower. */
  confidence: number;
  /** Base importance before emotion is applied. */
  importance: number;
  relations: RelationRef[];
  /** For update/forget: words identifying the memory that changes. */
  subject?: string;
  /** Events and short-lived states get an expiry. */
  event: boolean;
  /** An instruction introduced by a standing marker ("以后", "from now on", "always"). */
  standing: boolean;
}

/** Base importance by type: health facts and pain points are what a helper must not forget. */
export const BASE_IMPORTANCE: Readonly<Record<MemoryType, number>> = memoryTypeTable((d) => d.baseImportance);

/** Importance of health facts (allergies, conditions), whatever the wording. */
export const HEALTH_IMPORTANCE = 0.9;

/** Input of {@link makeMatch}; `relation` + `target` become a user relation. */
export interface MatchInit {
  type: MemoryType;
  intent?: Intent;
  confidence?: number;
  importance?: number;
  relation?: string;
  target?: string;
  subject?: string;
  event?: boolean;
  standing?: boolean;
}

/** Fills defaults of a {@link ClauseMatch}. */
export function makeMatch(rule: string, init: MatchInit): ClauseMatch {
  const target = init.target?.trim();
  return {
    rule,
    type: init.type,
    intent: init.intent ?? 'assert',
    confidence: init.confidence ?? 0.85,
    importance: init.importance ?? BASE_IMPORTANCE[init.type],
    relations: init.relation && target ? [{ source: 'user', relation: init.relation, target }] : [],
    subject: init.subject?.trim() || undefined,
    event: init.event ?? init.type === 'event',
    standing: init.standing ?? false,
  };
}

/** One trailing particle or filler word; {@link stripTrailing} takes off a run of them. */
const ZH_TRAILING = /(?:[了啊呀呢吧哦嘛啦的哪]|而已|一下|这件事|这事|的事|的事情|的信息|信息|的资料|资料|的数据|数据|相关的?(?:内容|信息)?|那些|这些|这条|那条|这一条|这句话?|那句话?)$/u;
const ZH_LEADING = /^(?:我的|我们的|[我的个点些]|一个|一只|一条|一名|一位|这个|那个|一些)+/u;
const EN_TRAILING =
  /(?<!\s)\s+(?:anymore|any more|again|now|too|as well|either|though|lol|please|information|info|data|details|stuff|thing|things|at all|every day|at work|these days|right now|for now|in general|yesterday|today|last (?:week|month|year|quarter|night)|this (?:week|month|year|quarter)|\d+ \w+ ago)$/iu;
const EN_LEADING = /^(?:(?:the|a|an|my|our|your|some|any|that|this|about)\s+)+/iu;

/** Trims particles, articles and filler around a rule's object ("我的高血压信息吧" → "高血压"). */
export function cleanObject(raw: string, lang: Lang): string {
  let s = raw.trim().replace(/^["“「'‘]+|(?<![，,。.!！?？;；:：~～"“”'‘’」])[，,。.!！?？;；:：~～"“”'‘’」]+$/gu, '').trim();
  if (lang === 'zh') {
    for (let i = 0; i < 3; i += 1) s = stripTrailing(s, ZH_TRAILING, 8).replace(ZH_LEADING, '').trim();
  } else {
    for (let i = 0; i < 3; i += 1) s = stripTrailing(s, EN_TRAILING, 64).replace(EN_LEADING, '').trim();
  }
  return s;
}

const ZH_GENERIC_VERBS = /^(?:[吃喝用是在做会能去有玩看听写搞碰]|可以)+/u;

/**
 * The content words of a changed predicate: "可以吃花生" → "花生", "stopped being vegetarian" →
 * "vegetarian". Chinese needs the segmenter; English words are split on spaces.
 */
export function subjectWords(raw: string, lang: 'en'): string;
export function subjectWords(raw: string, lang: Lang, segmenter: Segmenter): string;
export function subjectWords(raw: string, lang: Lang, segmenter?: Segmenter): string {
  const cleaned = cleanObject(raw, lang);
  // Where one lives and what one works as are identified by the kind of fact, not by the old value.
  if (lang === 'zh' && /住|搬家/u.test(cleaned)) return '住';
  if (lang === 'zh' && /工作|上班|职业|岗位/u.test(cleaned)) return '工作';
  if (lang === 'en' && /\b(?:live|living|lived|reside)\b/iu.test(cleaned)) return 'live';
  if (lang === 'en' && /\b(?:job|jobs|career|work as|working as)\b/iu.test(cleaned)) return 'job';
  if (lang === 'zh') {
    const stripped = cleaned.replace(ZH_GENERIC_VERBS, '');
    // The overloads make a Chinese call pass the segmenter.
    return extractKeywords(stripped.length >= 2 ? stripped : cleaned, 'zh', segmenter!, 3)
      .filter((w) => !ZH_STOPWORDS.has(w))
      .join(' ');
  }
  const words = cleaned
    .toLowerCase()
    .replace(/^(?:being|eating|drinking|using|doing|having|a|an|the)\s+/u, '')
    .split(/\s+/u)
    .filter((w) => w && !EN_STOPWORDS.has(w) && !/^(?:eat|eating|drink|drinking|use|using|being|do|doing|have|having)$/u.test(w));
  return words.slice(0, 3).join(' ');
}

/** Words that make a statement uncertain ("maybe", "可能"): confidence drops below 0.7. */
const HEDGE = /可能|好像|也许|大概|或许|估计|似乎|说不定|不太确定|不确定|应该是|貌似|\b(?:maybe|perhaps|probably|possibly|i think|i guess|i suppose|kind of|kinda|sort of|might|not sure|i believe)\b/iu;

/** True when the text hedges ("maybe", "可能", "I think"). */
export function isHedged(text: string): boolean {
  return HEDGE.test(text);
}

/** Statements limited to the task at hand ("这个需求用 Python", "for this script use Python"). */
const TASK_SCOPE =
  /这个[^，,。]{0,8}?(?:需求|任务|脚本|功能|接口|页面|工单|bug|issue|pr|问题|小工具|练习|demo|作业)|这次|本次|这一次|这回|此次|这个项目里?先|\bfor (?:this|the current) (?:task|script|project|ticket|one|pr|feature|function|request|exercise|assignment|bug|issue|file|change)\b|\bthis time\b|\bjust this once\b|\bin this (?:script|task|file|project|function)\b/iu;

/** Artifacts of a single piece of work: a request naming one is about that piece of work. */
const EN_ARTIFACT = '(?:task|script|ticket|report|pr|migration|query|email|slide|slides|deck|demo|prototype|exercise|assignment|page|function|feature|file|change|bug|issue|request|job|tool|one|draft|version)';
/**
 * One-off requests without the words above: a stack chosen for one named artifact ("这个爬虫用
 * Rust 写", "for the migration script, go with Node", "I'd like the export script in Ruby"), an
 * imperative "用 X 写/做" with no standing marker ("就用 Kotlin 写吧"), "this one", "the next answer".
 */
const ONE_OFF = new RegExp(
  [
    '这(?:个|份|段|篇|张|版)(?!月|周|星期|季度|学期|礼拜|阵子|段时间)[^，,。]{0,10}?(?:用|采用|改用|换成)\\s*[A-Za-z]',
    '^(?:请|麻烦|就|那就|那|先|帮我|给我|你|直接)*(?:改用|换成|用|使用|拿)\\s*[A-Za-z][\\w.+#-]*\\s*(?:来|去)?(?:写|做|实现|搞|重写|跑|弄|开发)',
    `\\bfor (?:this|that|the|today's|tonight's) (?:[\\w-]+ ){0,2}?${EN_ARTIFACT}s?\\b`,
    `\\b(?:the|this|that) (?:[\\w-]+ ){0,2}?${EN_ARTIFACT} (?:in|with|using) [\\w.+#-]+`,
    '\\b(?:this|that) one\\b',
    '\\b(?:the )?next (?:answer|reply|response|message|draft|version)\\b',
  ].join('|'),
  'iu',
);

/** True when the text limits itself to the current task. */
export function isTaskScoped(text: string): boolean {
  return TASK_SCOPE.test(text) || ONE_OFF.test(text);
}

/** What kind of memory a forget request most likely targets. */
export function guessForgetType(subject: string): MemoryType {
  if (/喜欢|口味|偏好|爱好|讨厌|prefer|like|taste|favou?rite/iu.test(subject)) return 'preference';
  if (/目标|计划|goal|plan/iu.test(subject)) return 'goal';
  if (/指令|要求|规矩|instruction|rule/iu.test(subject)) return 'instruction';
  if (/行程|出差|安排|trip|appointment|event/iu.test(subject)) return 'event';
  return 'fact';
}

