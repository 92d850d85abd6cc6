/**
 * Time words of events and short-lived states, and resolution of the day an event refers to.
 * Time always comes from the message's timestamp (never the clock), read in the user's zone.
 */
import * as chrono from 'chrono-node';
import { DateTime } from 'luxon';
import type { Lang } from './text';

/** How long an event or a short-lived state stays relevant after it was said. */
export const SHORT_LIVED_DAYS = 30;

const ZH_WEEKDAY = '[一二三四五六日天末]';
/** Day-level time words that anchor an event ("下周五", "昨晚", "6月2号"). */
export const ZH_TIME = new RegExp(
  [
    '今天|今早|今晚|今儿|今天早上|昨天|昨晚|昨儿|前天|明天|明早|明晚|后天|大后天|刚才|刚刚',
    `(?:这|本|下|上|下下)(?:个)?(?:周|星期|礼拜)${ZH_WEEKDAY}?`,
    `(?:这个|这|本)?周末`,
    `(?:星期|周|礼拜)${ZH_WEEKDAY}`,
    '(?:这|下|上)个?月(?:初|底|中)?',
    '\\d{1,2}月\\d{1,2}[日号]|[一二三四五六七八九十]{1,3}月[一二三四五六七八九十]{1,3}[日号]',
    '月底|月初|年底|年初|国庆|春节|五一|元旦|中秋|端午|圣诞|这几天|这两天',
  ].join('|'),
  'u',
);

const EN_DAY = '(?:mon|tues|wednes|thurs|fri|satur|sun)day';
const EN_MONTH = '(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*';
/** English day-level time words ("tomorrow", "last week", "on Friday"). */
export const EN_TIME = new RegExp(
  [
    '\\b(?:today|tonight|yesterday|tomorrow|earlier today|this (?:morning|afternoon|evening))\\b',
    `\\b(?:this|next|last|coming|this past) (?:week|weekend|month|${EN_DAY}|night)\\b`,
    `\\b(?:on |this |next |last )?${EN_DAY}\\b`,
    `\\b(?:in|on|by) ${EN_MONTH}(?: \\d{1,2}(?:st|nd|rd|th)?)?\\b`,
    '\\b\\d+ (?:days|weeks|months) ago\\b|\\bthe other day\\b|\\bover the weekend\\b|\\bthis week\\b',
  ].join('|'),
  'iu',
);

/** Markers of a state that will not last ("最近在学 Rust", "this week I'm…"). */
export const ZH_SHORT_LIVED = /最近|近期|这几天|这两天|这阵子|这段时间|这周|本周|这个月|这个周末|暂时/u;
/** English markers of a state that will not last. */
export const EN_SHORT_LIVED = /\b(?:lately|recently|these days|this week|this month|this weekend|for the next few days|temporarily|for a few days)\b/iu;

function validZone(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).isValid ? zone : 'utc';
}

/**
 * chrono resolves "明天"/"next Friday" against the reference's wall clock in the host's zone.
 * Shifting the instant by (user offset − host offset) makes that wall clock the user's, so the
 * result does not depend on where the process runs.
 */
function wallClockReference(at: Date, zone: string): Date {
  const userOffset = DateTime.fromJSDate(at, { zone }).offset;
  const hostOffset = -at.getTimezoneOffset();
  return new Date(at.getTime() + (userOffset - hostOffset) * 60_000);
}

/** Week- and month-level words chrono leaves alone, as a day offset or month shift. */
function coarseShift(text: string, lang: Lang): { days?: number; months?: number } | undefined {
  if (lang === 'zh') {
    if (/下下个?(?:周|星期)/u.test(text)) return { days: 14 };
    if (/下个?(?:周|星期|礼拜)/u.test(text)) return { days: 7 };
    if (/上个?(?:周|星期|礼拜)/u.test(text)) return { days: -7 };
    if (/下个?月/u.test(text)) return { months: 1 };
    if (/上个?月/u.test(text)) return { months: -1 };
    if (/这|本|周末|这几天|这两天/u.test(text)) return { days: 0 };
    return undefined;
  }
  if (/\bnext (?:week|weekend)\b/iu.test(text)) return { days: 7 };
  if (/\blast (?:week|weekend)\b/iu.test(text)) return { days: -7 };
  if (/\bnext month\b/iu.test(text)) return { months: 1 };
  if (/\blast month\b/iu.test(text)) return { months: -1 };
  if (/\bthis (?:week|weekend|month)\b/iu.test(text)) return { days: 0 };
  return undefined;
}

/**
 * The local day an event statement refers to, relative to when it was said: "明天面试" said on
 * 2026-01-05 → "2026-01-06". Undefined when the text names no day.
 */
export function resolveEventDay(text: string, lang: Lang, saidAt: Date, zone: string): string | undefined {
  const marker = (lang === 'zh' ? ZH_TIME : EN_TIME).exec(text);
  if (!marker) return undefined;
  const tz = validZone(saidAt, zone);
  const parser = lang === 'zh' ? chrono.zh : chrono.en;
  const past = lang === 'zh' ? /[了过昨上]|前天/u.test(text) : /\b(?:went|was|were|had|did|made|tried|\w+ed)\b|\blast\b|\bago\b/iu.test(text);
  const parsed = parser.parse(marker[0], wallClockReference(saidAt, tz), { forwardDate: !past })[0];
  if (parsed) {
    const { start } = parsed;
    return DateTime.fromObject({ year: start.get('year') ?? undefined, month: start.get('month') ?? undefined, day: start.get('day') ?? undefined }, { zone: tz }).toISODate() ?? undefined;
  }
  const shift = coarseShift(marker[0], lang);
  if (!shift) return undefined;
  return DateTime.fromJSDate(saidAt, { zone: tz }).plus(shift).toISODate() ?? undefined;
}

/** When an event or short-lived statement expires: 30 days after it was said, or after the event day if later. */
export function expiryFor(saidAt: Date, eventDay: string | undefined, zone: string): Date {
  const base = saidAt.getTime() + SHORT_LIVED_DAYS * 86_400_000;
  if (!eventDay) return new Date(base);
  const tz = validZone(saidAt, zone);
  const after = DateTime.fromISO(eventDay, { zone: tz }).plus({ days: 1 }).toJSDate().getTime();
  return new Date(Math.max(base, after));
}
