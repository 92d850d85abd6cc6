/**
 * Date expressions in recall queries ("上周三我们聊了什么", "what did you recommend last Tuesday").
 *
 * Pure: no clock, no I/O; `now` and the user's IANA zone are parameters. All calendar math is
 * done with luxon in the user's zone, so ranges are whole *local* days (23 or 25 hours long on
 * DST days) and weeks are ISO weeks (Monday to Monday), as in Chinese usage.
 *
 * Division of labour, and why:
 * - chrono-node finds *absolute* dates in both languages ("5月2号", "2026年6月2日", "May 2",
 *   "2 June", "2026-06-02", "May 2-5") and English day words ("yesterday", "the day before
 *   yesterday", "3 days ago"). Only its calendar *components* are used, never its instants:
 *   chrono's zh parsers ignore the reference time zone, so chrono is given a "floating"
 *   reference whose host-local fields equal the user's wall clock, and the components it
 *   returns are re-anchored in the user's zone with luxon.
 * - Small rules here cover what chrono misses or resolves differently: 后天/上周/上个月/N天前/
 *   两周前, weekday semantics (chrono treats 上周日 as in a Sunday-start week and resolves bare
 *   weekdays forward), week/month ranges, and fuzzy "前几天". Rule matches win over chrono's.
 * - chrono results that are only a time of day ("9点超时"), only a weekday (chrono reads "sat
 *   down" as Saturday), or a bare slash fraction ("3/4 of the team", "24/7") are dropped.
 */
import * as chrono from 'chrono-node';
import { cutAt, MAX_SENTENCE_CHARS, squeezeSpaces } from '../text/bounds';
import { DateTime } from 'luxon';

/** A local-time interval named by a query: [start, end). */
export interface DateRange {
  start: Date;
  end: Date;
  /** the matched text */
  text: string;
  granularity: 'day' | 'week' | 'month' | 'range';
}

type Granularity = DateRange['granularity'];

interface Span {
  start: DateTime;
  end: DateTime;
  granularity: Granularity;
}

interface Candidate extends Span {
  index: number;
  stop: number;
  /** 0 = rule here, 1 = chrono: rules win on overlap. */
  source: 0 | 1;
}

// ---------------------------------------------------------------------------------------------
// Shared helpers (also used by reminder-request.ts).
// ---------------------------------------------------------------------------------------------

/** Regex source for a small cardinal number in Arabic or Chinese digits ("12", "十二", "两"). */
export const ZH_NUMBER_SOURCE = '(?:\\d{1,3}|[零〇一二两三四五六七八九十百]{1,4})';

const ZH_DIGITS: Readonly<Record<string, number>> = {
  零: 0, 〇: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9,
};

/**
 * Parses a small cardinal written in Arabic digits or Chinese numerals: "3", "十" (10), "十二",
 * "二十五", "一百零五", "两", "零五" (5). Undefined for anything else.
 */
export function parseChineseNumber(text: string): number | undefined {
  const s = text.trim();
  if (/^\d+$/u.test(s)) return Number.parseInt(s, 10);
  if (!/^[零〇一二两三四五六七八九十百]+$/u.test(s)) return undefined;
  let total = 0;
  let digit: number | undefined;
  for (const ch of s) {
    if (ch === '百') {
      total += (digit ?? 1) * 100;
      digit = undefined;
    } else if (ch === '十') {
      total += (digit ?? 1) * 10;
      digit = undefined;
    } else {
      const d = ZH_DIGITS[ch];
      if (d === undefined) return undefined;
      // "二〇二六" style digit strings: a digit right after a digit shifts the previous one.
      digit = digit === undefined ? d : digit * 10 + d;
    }
  }
  return total + (digit ?? 0);
}

/**
 * Folds full-width ASCII ("１２月", "ｍａｙ") and the ideographic space to plain ASCII. Strictly
 * one code unit to one code unit, so match indices still point into the original text.
 */
export function normaliseWidth(text: string): string {
  return text.replace(/[\uFF01-\uFF5E\u3000]/gu, (ch) =>
    ch === '\u3000' ? ' ' : String.fromCharCode(ch.charCodeAt(0) - 0xfee0),
  );
}

/**
 * `at` as a luxon DateTime in `timeZone`.
 * @throws RangeError when `timeZone` is not a valid IANA zone (silently using UTC would shift
 * every "today" for the user).
 */
export function inZone(at: Date, timeZone: string): DateTime {
  const dt = DateTime.fromJSDate(at, { zone: timeZone });
  if (!dt.isValid) throw new RangeError(`Invalid IANA time zone: ${timeZone}`);
  return dt;
}

/**
 * A Date whose *host-local* fields equal the wall clock of `dt`. chrono computes relative words
 * ("昨天", "tomorrow") from host-local fields, and its zh parsers ignore a reference time zone, so
 * this is the one way to make chrono count days in the user's zone. Only calendar components of
 * chrono results may be used afterwards, never their instants. (In the rare hour where the
 * wall clock does not exist in the host's zone the reference shifts by that hour; day-level
 * results are unaffected.)
 */
export function floatingReference(dt: DateTime): Date {
  return new Date(dt.year, dt.month - 1, dt.day, dt.hour, dt.minute, dt.second);
}

/** Chinese weekday characters → ISO weekday (Monday = 1 … Sunday = 7). */
export const ZH_WEEKDAY: Readonly<Record<string, number>> = {
  一: 1, 二: 2, 三: 3, 四: 4, 五: 5, 六: 6, 日: 7, 天: 7,
};

/** English weekday names → ISO weekday (Monday = 1 … Sunday = 7). */
export const EN_WEEKDAY: Readonly<Record<string, number>> = {
  monday: 1, tuesday: 2, wednesday: 3, thursday: 4, friday: 5, saturday: 6, sunday: 7,
};

/** Regex source for a Chinese weekday character; "一" must not start 一直/一起/一样… ("这周一直在忙"). */
export const ZH_WEEKDAY_CHAR_SOURCE = '(?:一(?![直起样般些共切定次])|[二三四五六日天])';

const EN_WEEKDAY_SOURCE = '(monday|tuesday|wednesday|thursday|friday|saturday|sunday)';

/** English number words used in "two weeks ago", "in three hours". */
export const EN_NUMBER: Readonly<Record<string, number>> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9,
  ten: 10, eleven: 11, twelve: 12, fifteen: 15, twenty: 20, thirty: 30, forty: 40, fifty: 50,
  sixty: 60, 'a couple of': 2, 'couple of': 2, 'a couple': 2,
};

/** Regex source matching a number in digits or an {@link EN_NUMBER} word. */
export const EN_NUMBER_SOURCE =
  '(\\d+|a couple of|couple of|a couple|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|sixty)';

/** Parses digits or an {@link EN_NUMBER} word (case-insensitive). */
export function parseEnglishNumber(text: string): number | undefined {
  const s = text.trim().toLowerCase().replace(/\s+/gu, ' ');
  if (/^\d+$/u.test(s)) return Number.parseInt(s, 10);
  return EN_NUMBER[s];
}

// ---------------------------------------------------------------------------------------------
// Calendar helpers (all in the user's zone).
// ---------------------------------------------------------------------------------------------

function daySpan(day: DateTime): Span {
  const start = day.startOf('day');
  return { start, end: start.plus({ days: 1 }), granularity: 'day' };
}

/** ISO week (Monday start; luxon's startOf('week') is ISO unless locale weeks are requested). */
function weekSpan(day: DateTime): Span {
  const start = day.startOf('week');
  return { start, end: start.plus({ weeks: 1 }), granularity: 'week' };
}

function monthSpan(day: DateTime): Span {
  const start = day.startOf('month');
  return { start, end: start.plus({ months: 1 }), granularity: 'month' };
}

/** [first, last] as whole days. */
function rangeSpan(first: DateTime, lastInclusive: DateTime): Span {
  return { start: first.startOf('day'), end: lastInclusive.startOf('day').plus({ days: 1 }), granularity: 'range' };
}

/** `weekday` (ISO) of the ISO week `weeks` away from `today`'s week. */
function weekdayInWeek(today: DateTime, weeks: number, weekday: number): DateTime {
  return today.startOf('week').plus({ weeks, days: weekday - 1 });
}

/** The most recent `weekday` on or before `today`. */
function weekdayOnOrBefore(today: DateTime, weekday: number): DateTime {
  return today.minus({ days: (today.weekday - weekday + 7) % 7 });
}

/** The most recent `weekday` strictly before `today`. */
function weekdayBefore(today: DateTime, weekday: number): DateTime {
  return today.minus({ days: (today.weekday - weekday + 7) % 7 || 7 });
}

/** Saturday 00:00 to Monday 00:00 of the ISO week `weeks` away. */
function weekendSpan(today: DateTime, weeks: number): Span {
  return rangeSpan(weekdayInWeek(today, weeks, 6), weekdayInWeek(today, weeks, 7));
}

/** A local date, or undefined when it does not exist (Feb 30). */
function localDate(year: number, month: number, day: number, zone: string): DateTime | undefined {
  const dt = DateTime.fromObject({ year, month, day }, { zone });
  return dt.isValid && dt.day === day ? dt : undefined;
}

/**
 * The shared-past reading of a month-day without a year: the most recent such date on or before
 * today ("5月2日" asked in March 2026 → 2025-05-02). (chrono itself drops a year-less "2月29日" in
 * a non-leap year, so that one date needs its year spelled out.)
 */
function pastMonthDay(today: DateTime, month: number, day: number): DateTime | undefined {
  for (let year = today.year; year >= today.year - 8; year -= 1) {
    const dt = localDate(year, month, day, today.zoneName ?? 'UTC');
    if (dt && dt <= today) return dt;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Rules for what chrono misses or resolves differently.
// ---------------------------------------------------------------------------------------------

interface Rule {
  pattern: RegExp;
  resolve(match: RegExpExecArray, today: DateTime, text: string): Span | undefined;
}

const ZH_DAY_OFFSET: Readonly<Record<string, number>> = {
  大前天: -3, 前天: -2, 昨天: -1, 昨日: -1, 昨晚: -1, 昨夜: -1, 昨儿: -1,
  今天: 0, 今日: 0, 今早: 0, 今晨: 0, 今晚: 0, 今儿: 0,
  明天: 1, 明日: 1, 明早: 1, 明晚: 1, 后天: 2, 大后天: 3,
};

const ZH_WEEK_OFFSET: Readonly<Record<string, number>> = { 上上: -2, 上: -1, 这: 0, 本: 0, 下: 1, 下下: 2 };

const NUM = ZH_NUMBER_SOURCE;

const RULES: readonly Rule[] = [
  // 今天/昨天/前天/大前天/明天/后天…: chrono.zh misses 后天/大后天, so all day words are here.
  {
    pattern: /大前天|大后天|前天|后天|昨天|昨日|昨晚|昨夜|昨儿|今天|今日|今早|今晨|今晚|今儿|明天|明日|明早|明晚/gu,
    resolve: (m, today) => daySpan(today.plus({ days: ZH_DAY_OFFSET[m[0]] ?? 0 })),
  },
  // Fuzzy "a few days ago": a whole-day window is more useful for recall than a guessed day.
  {
    pattern: /前几天|几天前|几天之前|前两天|这几天|这两天|最近几天|近几天/gu,
    resolve: (m, today) => {
      switch (m[0]) {
        case '前两天':
          return { start: today.minus({ days: 3 }), end: today, granularity: 'range' };
        case '这两天':
          return rangeSpan(today.minus({ days: 2 }), today);
        case '这几天':
        case '最近几天':
        case '近几天':
          return rangeSpan(today.minus({ days: 6 }), today);
        default:
          return { start: today.minus({ days: 7 }), end: today, granularity: 'range' };
      }
    },
  },
  // N天前 / 两周前 / 3个月前 / 十天后: days → that day; weeks → the ISO week containing the day
  // 7N days away (so 两周前 ≈ 上上周); months → the calendar month N months away.
  {
    pattern: new RegExp(`(?<![\\d零〇一二两三四五六七八九十百])(${NUM})(?:\\s*个)?\\s*(天|日|周|星期|礼拜|月)\\s*[以之]?(前|后)`, 'gu'),
    resolve: (m, today) => {
      const n = parseChineseNumber(m[1] ?? '');
      if (n === undefined) return undefined;
      const sign = m[3] === '前' ? -1 : 1;
      const unit = m[2];
      if (unit === '天' || unit === '日') return daySpan(today.plus({ days: sign * n }));
      if (unit === '月') return monthSpan(today.plus({ months: sign * n }));
      return weekSpan(today.plus({ weeks: sign * n }));
    },
  },
  // 上周三 / 这周一 / 本周五 / 下周日 / 周五 / 星期天 / 礼拜三.
  {
    // "一/个" only after a modifier ("这一周三"), or "一周三次" would read as a Wednesday.
    pattern: new RegExp(`(?:(上上|上|这|本|下下|下)(?:一|个)?)?(?:周|星期|礼拜)(${ZH_WEEKDAY_CHAR_SOURCE})`, 'gu'),
    resolve: (m, today, text) => {
      const weekday = ZH_WEEKDAY[m[2] ?? ''];
      if (weekday === undefined) return undefined;
      const modifier = m[1];
      if (modifier === undefined) {
        // "每周一" is a recurrence and "一周三次"/"两周一次" count weeks: not a date.
        const before = text[m.index - 1] ?? '';
        if (/[每几\d零〇一二两三四五六七八九十]/u.test(before)) return undefined;
        return daySpan(weekdayOnOrBefore(today, weekday));
      }
      return daySpan(weekdayInWeek(today, ZH_WEEK_OFFSET[modifier] ?? 0, weekday));
    },
  },
  // 上周 / 这周 / 本星期 / 上上周 / 下周 (not 周围/周边/周期/周年…, not a weekday that follows).
  {
    pattern: new RegExp(
      `(上上|上|这|本|下下|下)(?:一|个)?(?:周|星期|礼拜)(?!${ZH_WEEKDAY_CHAR_SOURCE}|[末围边期转刊报岁年])`,
      'gu',
    ),
    resolve: (m, today) => weekSpan(today.plus({ weeks: ZH_WEEK_OFFSET[m[1] ?? ''] ?? 0 })),
  },
  // 上周末 / 这周末 / 周末: a bare 周末 is the most recent weekend that has started.
  {
    pattern: /(?:(上上|[上这本下])个?)?周末/gu,
    resolve: (m, today, text) => {
      if (m[1] !== undefined) return weekendSpan(today, ZH_WEEK_OFFSET[m[1]] ?? 0);
      if (text[m.index - 1] === '每') return undefined; // 每周末: a habit
      return weekendSpan(today, today.weekday >= 6 ? 0 : -1);
    },
  },
  // 最近一周 / 过去7天 / 近三个月: a rolling window ending today.
  {
    pattern: new RegExp(`(?:最近|过去|近)的?\\s*(${NUM})(?:\\s*个)?\\s*(天|日|周|星期|礼拜|月)`, 'gu'),
    resolve: (m, today) => {
      const n = parseChineseNumber(m[1] ?? '');
      if (n === undefined || n < 1) return undefined;
      const unit = m[2] === '月' ? 'months' : m[2] === '天' || m[2] === '日' ? 'days' : 'weeks';
      return rangeSpan(today.minus({ [unit]: n }).plus({ days: 1 }), today);
    },
  },
  // 上个月 / 这个月 / 本月 / 上上个月 / 下个月.
  {
    pattern: /(上上|[上这本]|下下|下)一?个?月(?![饼亮光球\d零〇一二两三四五六七八九十])/gu,
    resolve: (m, today) => monthSpan(today.plus({ months: ZH_WEEK_OFFSET[m[1] ?? ''] ?? 0 })),
  },
  // 上个月3号 / 这个月15日 (chrono.zh has no month-relative day).
  {
    pattern: new RegExp(`(上上|上|这|本|下)(?:一)?(?:个)?月\\s*(${NUM})\\s*[号日]`, 'gu'),
    resolve: (m, today) => {
      const day = parseChineseNumber(m[2] ?? '');
      const month = today.plus({ months: ZH_WEEK_OFFSET[m[1] ?? ''] ?? 0 });
      if (day === undefined) return undefined;
      const dt = localDate(month.year, month.month, day, today.zoneName ?? 'UTC');
      return dt ? daySpan(dt) : undefined;
    },
  },
  // 去年5月 / 今年3月8号 / 前年: chrono.zh reads "去年5月" as a bare "年5月".
  {
    pattern: new RegExp(`(前年|去年|今年|明年)(?:\\s*(${NUM})\\s*月份?(?:\\s*(${NUM})\\s*[号日])?)?`, 'gu'),
    resolve: (m, today) => {
      const year = today.year + ({ 前年: -2, 去年: -1, 今年: 0, 明年: 1 }[m[1] ?? '今年'] ?? 0);
      if (m[2] === undefined) {
        const start = DateTime.fromObject({ year, month: 1, day: 1 }, { zone: today.zoneName ?? 'UTC' });
        return { start, end: start.plus({ years: 1 }), granularity: 'range' };
      }
      const month = parseChineseNumber(m[2]);
      if (month === undefined || month < 1 || month > 12) return undefined;
      if (m[3] === undefined) return monthSpan(DateTime.fromObject({ year, month, day: 1 }, { zone: today.zoneName ?? 'UTC' }));
      const day = parseChineseNumber(m[3]);
      const dt = day === undefined ? undefined : localDate(year, month, day, today.zoneName ?? 'UTC');
      return dt ? daySpan(dt) : undefined;
    },
  },
  // English weekdays. "last Tuesday" = the most recent Tuesday strictly before today (said on a
  // Thursday: two days ago; said on a Tuesday: a week ago). "this Monday" = Monday of the current
  // ISO week. "next Friday" = Friday of the next ISO week. A bare/"on" weekday = the most recent
  // one on or before today (the shared past). "Tuesday last week" = Tuesday of the previous ISO
  // week. Plurals ("on Mondays") are habits, not dates.
  {
    pattern: new RegExp(
      `\\b(?:(last|this|next|past|previous|coming)\\s+)?${EN_WEEKDAY_SOURCE}(?!s\\b)(?:,?\\s+(?:of\\s+)?(last|this|next)\\s+week)?\\b`,
      'giu',
    ),
    resolve: (m, today) => {
      const weekday = EN_WEEKDAY[(m[2] ?? '').toLowerCase()];
      if (weekday === undefined) return undefined;
      const week = m[3]?.toLowerCase();
      if (week) return daySpan(weekdayInWeek(today, week === 'last' ? -1 : week === 'next' ? 1 : 0, weekday));
      switch (m[1]?.toLowerCase()) {
        case 'last':
        case 'past':
        case 'previous':
          return daySpan(weekdayBefore(today, weekday));
        case 'this':
          return daySpan(weekdayInWeek(today, 0, weekday));
        case 'next':
          return daySpan(weekdayInWeek(today, 1, weekday));
        case 'coming':
          return daySpan(today.plus({ days: (weekday - today.weekday + 7) % 7 || 7 }));
        default:
          return daySpan(weekdayOnOrBefore(today, weekday));
      }
    },
  },
  // last/this/next week|month|year|weekend, "the week before last", "over the weekend".
  {
    pattern: /\b(?:(last|this|next|previous)\s+(week|month|year|weekend)|the\s+(week|month)\s+before\s+last|(?:over\s+)?the\s+weekend)\b/giu,
    resolve: (m, today) => {
      if (m[3]) {
        return m[3].toLowerCase() === 'week' ? weekSpan(today.minus({ weeks: 2 })) : monthSpan(today.minus({ months: 2 }));
      }
      if (!m[1]) return weekendSpan(today, today.weekday >= 6 ? 0 : -1);
      const offset = { last: -1, previous: -1, this: 0, next: 1 }[m[1].toLowerCase()] ?? 0;
      switch ((m[2] ?? '').toLowerCase()) {
        case 'week':
          return weekSpan(today.plus({ weeks: offset }));
        case 'month':
          return monthSpan(today.plus({ months: offset }));
        case 'weekend':
          return weekendSpan(today, offset);
        default: {
          const start = today.startOf('year').plus({ years: offset });
          return { start, end: start.plus({ years: 1 }), granularity: 'range' };
        }
      }
    },
  },
  // "the past week" / "in the last 3 days" / "past 2 months": a rolling window ending today.
  // Without "the" or a number, "last week" is the calendar week (rule above).
  {
    pattern: new RegExp(
      `\\b(?:the\\s+(?:past|last)\\s+(?:${EN_NUMBER_SOURCE}\\s+)?|(?:past|last)\\s+${EN_NUMBER_SOURCE}\\s+)(days?|weeks?|months?)\\b`,
      'giu',
    ),
    resolve: (m, today) => {
      const n = parseEnglishNumber(m[1] ?? m[2] ?? '1');
      if (n === undefined || n < 1) return undefined;
      const unitWord = (m[3] ?? '').toLowerCase();
      const unit = unitWord.startsWith('day') ? 'days' : unitWord.startsWith('week') ? 'weeks' : 'months';
      return rangeSpan(today.minus({ [unit]: n }).plus({ days: 1 }), today);
    },
  },
  // "two weeks ago" / "3 months ago": same reading as 两周前 / 3个月前. Days are left to chrono.
  {
    pattern: new RegExp(`\\b${EN_NUMBER_SOURCE}\\s+(weeks?|months?)\\s+ago\\b`, 'giu'),
    resolve: (m, today) => {
      const n = parseEnglishNumber(m[1] ?? '');
      if (n === undefined) return undefined;
      return (m[2] ?? '').toLowerCase().startsWith('week')
        ? weekSpan(today.minus({ weeks: n }))
        : monthSpan(today.minus({ months: n }));
    },
  },
  // Fuzzy English days (chrono would pin "a few days ago" to exactly 3 days).
  {
    pattern: /\b(?:(?:(?:a\s+)?few|several)\s*|(?:a\s+)?couple(?:\s+of)?\s+)days\s+ago\b|\bthe\s+other\s+day\b/giu,
    resolve: (_m, today) => ({ start: today.minus({ days: 7 }), end: today, granularity: 'range' }),
  },
  // Parts of today chrono leaves without a day ("this morning").
  {
    pattern: /\b(?:this\s+(?:morning|afternoon|evening)|earlier\s+today)\b/giu,
    resolve: (_m, today) => daySpan(today),
  },
];

/** All matches of all rules, overlapping ones included (resolveOverlaps picks the longest). */
function ruleCandidates(text: string, today: DateTime): Candidate[] {
  const out: Candidate[] = [];
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(text); m !== null; m = rule.pattern.exec(text)) {
      rule.pattern.lastIndex = m.index + 1;
      if (m[0].length === 0) continue;
      const span = rule.resolve(m, today, text);
      if (span) out.push({ ...span, index: m.index, stop: m.index + m[0].length, source: 0 });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// chrono for absolute dates and English day words.
// ---------------------------------------------------------------------------------------------

/** Words before a bare English month name that make it a time reference ("in May", not "May I"). */
const EN_MONTH_CONTEXT = /\b(?:in|during|throughout|early|late|mid|of|back\s+in)[\s-]*$/iu;
const ZH_MONTH_ONLY = /^[\d零〇一二两三四五六七八九十]+\s*月$/u;

function chronoSpan(result: chrono.ParsedResult, text: string, today: DateTime): Span | undefined {
  const { start } = result;
  const tags = result.tags();
  if (tags.has('casualReference/now')) return undefined;
  // Relative results are trusted only for day-sized units; weeks/months have rules with
  // week/month ranges, and "two years ago" has no sensible day.
  if (tags.has('result/relativeDate') && !/\b(?:days?|hours?|minutes?|yesterday|tomorrow)\b/iu.test(result.text)) {
    return undefined;
  }
  const zone = today.zoneName ?? 'UTC';
  const month = start.isCertain('month') ? start.get('month') : null;
  if (month === null) return undefined;

  if (start.isCertain('day')) {
    const day = start.get('day');
    if (day === null) return undefined;
    const yearKnown = start.isCertain('year');
    // "3/4 of the team", "24/7", "1/2": a slash pair without a year is more often not a date.
    if (tags.has('parser/SlashDateFormatParser') && !yearKnown) return undefined;
    const first = yearKnown ? localDate(start.get('year') ?? today.year, month, day, zone) : pastMonthDay(today, month, day);
    if (!first) return undefined;
    const end = result.end;
    if (end && end.isCertain('day')) {
      const endMonth = end.isCertain('month') ? (end.get('month') ?? month) : month;
      let last = localDate(end.isCertain('year') ? (end.get('year') ?? first.year) : first.year, endMonth, end.get('day') ?? day, zone);
      if (last && last < first && !end.isCertain('year')) last = last.plus({ years: 1 });
      if (last && last > first) return rangeSpan(first, last);
    }
    return daySpan(first);
  }

  // A month without a day: "5月份", "2026年6月", "in May", "May 2025".
  const yearKnown = start.isCertain('year');
  if (!yearKnown) {
    const isZh = ZH_MONTH_ONLY.test(result.text);
    const isEnInContext = EN_MONTH_CONTEXT.test(text.slice(0, result.index));
    if (!isZh && !isEnInContext) return undefined;
  }
  const year = yearKnown ? (start.get('year') ?? today.year) : month <= today.month ? today.year : today.year - 1;
  return monthSpan(DateTime.fromObject({ year, month, day: 1 }, { zone }));
}

function chronoCandidates(text: string, today: DateTime, now: DateTime): Candidate[] {
  const reference = floatingReference(now);
  // chrono reads the query with whitespace runs squeezed and at most a sentence of it: its zh
  // patterns backtrack on long whitespace and numeral runs (5 s on 8000 "一"), ours read it all.
  const squeezed = squeezeSpaces(cutAt(text, MAX_SENTENCE_CHARS));
  const results = [...chrono.zh.casual.parse(squeezed.text, reference), ...chrono.en.casual.parse(squeezed.text, reference)];
  const out: Candidate[] = [];
  for (const result of results) {
    const span = chronoSpan(result, squeezed.text, today);
    const stop = squeezed.original(result.index + result.text.length - 1) + 1;
    if (span) out.push({ ...span, index: squeezed.original(result.index), stop, source: 1 });
  }
  return out;
}

/** Rules first, then longer matches; overlapping later candidates are dropped. */
function resolveOverlaps(candidates: Candidate[]): Candidate[] {
  const ordered = [...candidates].sort(
    (a, b) => a.source - b.source || b.stop - b.index - (a.stop - a.index) || a.index - b.index,
  );
  const kept: Candidate[] = [];
  for (const c of ordered) {
    if (kept.every((k) => c.stop <= k.index || c.index >= k.stop)) kept.push(c);
  }
  return kept.sort((a, b) => a.index - b.index);
}

/** Blanks the given spans (same length, `fill` per code unit) so a second parser cannot re-read them. */
export function blankSpans(text: string, spans: readonly { index: number; stop: number }[], fill = ' '): string {
  const chars = text.split('');
  for (const s of spans) for (let i = s.index; i < s.stop; i += 1) chars[i] = fill;
  return chars.join('');
}

/**
 * Finds date expressions in a recall query, relative to `now` in the user's IANA timezone.
 * Returns [] when the query has none. Ranges are ordered by position in the query.
 *
 * Interpretation (the query is about the shared past, so ambiguity resolves backwards):
 * - Day words, explicit dates, "N天前"/"3 days ago", weekdays → one local day [00:00, next 00:00).
 * - A month-day without a year ("5月2日", "May 2") → the most recent such date on or before today.
 * - "上周三" → Wednesday of the previous ISO (Monday-start) week; "这周一"/"this Monday" → Monday
 *   of the current ISO week; bare "周五"/"Friday" → the most recent Friday on or before today.
 * - "last Tuesday" → the most recent Tuesday strictly before today (on a Thursday: two days ago).
 * - "上周"/"last week" → the previous ISO week; "上个月"/"last month" → the previous calendar month.
 * - "两周前"/"two weeks ago" → granularity 'week': the ISO week containing the day 14 days ago
 *   (recall wants the conversation, which rarely happened on exactly day −14).
 * - "前几天"/"a few days ago"/"the other day" → 'range' of the 7 days before today; "上周末" →
 *   Saturday–Sunday of the previous week; "去年"/"last year" → 'range' of that calendar year;
 *   "May 2-5"/"5月2日到5月5日" → 'range' over both days.
 * - Times of day alone ("9点超时"), counts ("3 books"), ages ("I'm 30") and metrics ("50ms") are
 *   not dates.
 *
 * @throws RangeError when `timeZone` is not a valid IANA zone.
 */
export function parseQueryDates(query: string, opts: { now: Date; timeZone: string }): DateRange[] {
  const now = inZone(opts.now, opts.timeZone);
  const today = now.startOf('day');
  const text = normaliseWidth(query);
  const ruled = resolveOverlaps(ruleCandidates(text, today));
  const chronoFound = chronoCandidates(blankSpans(text, ruled), today, now);
  return resolveOverlaps([...ruled, ...chronoFound]).map((c) => ({
    start: c.start.toJSDate(),
    end: c.end.toJSDate(),
    text: query.slice(c.index, c.stop),
    granularity: c.granularity,
  }));
}

const SHARED_PAST_ZH =
  /你之前|之前你|你上次|你上回|上次|上回|那天(?!气)|那次|那会儿|记得吗|还记得|记不记得|你记得|你说过|你讲过|你提过|你提到过|你告诉过我|你跟我说过|你和我说过|你推荐过|你推荐的|你建议过|你提醒过|我跟你说过|我和你说过|我告诉过你|我说过|我提过|我提到过|我问过你|我们聊过|我们讨论过|我们谈过|咱们聊过|之前聊|之前说/u;
const SHARED_PAST_EN =
  /\b(?:you\s+(?:told|said|mentioned|recommended|suggested|reminded)|(?:what|which|who|where)\s+did\s+you\s+(?:recommend|suggest|say|tell|mention)|i\s+(?:told\s+you|mentioned|said|asked\s+you)|did\s+i|have\s+i\s+(?:ever\s+)?(?:told|mentioned|said)|we\s+(?:talked|discussed|spoke|chatted)|last\s+time|(?:do|did)\s+you\s+remember|you\s+remember|remember\s+when|earlier\s+you|the\s+other\s+day|that\s+day\s+when)\b/iu;

/**
 * True when the query refers to the shared past of user and assistant ("你之前/上次/那天/记得吗/
 * you told me/I mentioned/last time/did I/what did you recommend"), i.e. when recall should look
 * at earlier conversations rather than only at stable facts.
 */
export function refersToSharedPast(query: string): boolean {
  const text = normaliseWidth(query);
  return SHARED_PAST_ZH.test(text) || SHARED_PAST_EN.test(text);
}
