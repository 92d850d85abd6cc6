/**
 * Habits: "I usually…", "…always…", "我一般…", "写接口我都用…". A habit is a standing preference:
 * it holds for every new task of its kind, so it is a global preference, never a dated event or a
 * one-off fact, while a request for the task at hand ("这个需求用 Python", "for this script…") is
 * task-scoped and wins only for its task (see `isTaskScoped` in ./match.ts and the task lifetime
 * in ./candidate.ts).
 */
import type { ClauseMatch } from './match';
import type { Lang } from './text';

/** English habit markers: frequency adverbs and "every/most <time>". */
export const EN_HABIT =
  /\b(?:usually|normally|typically|generally|always|mostly|habitually|invariably|routinely|tend to|tends to|by default|as a rule|without fail|like always|as always|every (?:single )?(?:day|morning|evening|night|week|weekend|time)|most (?:days|mornings|evenings|nights|weekends|of the time)|on weekdays|on weekends)\b/iu;

/**
 * Chinese habit markers. "都" counts only after the speaker and before a verb of doing or using
 * ("我都用…", "写接口我都是…"), not as "even"/"all of us" ("我都不知道", "我们都是程序员").
 */
export const ZH_HABIT =
  /一般|通常|平时|平常|习惯|总是|向来|一向|一贯|默认|雷打不动|基本上?都|每次都|每回都|每天|每周|每晚|每个?周末|每个?早上|每个?晚上|(?:我|我们)[^，,。！!？?]{0,6}?都(?:[是用在会靠开选去喝吃写做坐骑拿听看爱]|习惯|喜欢)/u;

/** True when the statement describes what the speaker habitually does. */
export function isHabitual(text: string, lang: Lang): boolean {
  return lang === 'zh' ? ZH_HABIT.test(text) || EN_HABIT.test(text) : EN_HABIT.test(text);
}

/** Rules whose facts are about what the user does or uses: said as a habit, they are preferences. */
const DOING_RULES: ReadonlySet<string> = new Set(['en.stack.use', 'en.project.work', 'en.fact.activity', 'zh.stack.use', 'zh.project.work']);

/**
 * A habitual "I use / do X" becomes a standing preference ("I usually write my scripts in Bash",
 * "我做前端都是用 Vue"); every other verdict is returned unchanged.
 */
export function asHabit(match: ClauseMatch, clause: string, lang: Lang): ClauseMatch {
  if (match.intent !== 'assert' || match.type !== 'fact' || !DOING_RULES.has(match.rule) || !isHabitual(clause, lang)) return match;
  return { ...match, rule: `${match.rule}+habit`, type: 'preference', event: false };
}
