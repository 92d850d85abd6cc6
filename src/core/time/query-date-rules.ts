/**
 * Rules for what chrono misses or resolves differently in recall queries (后天/上周/上个月/N天前/
 * 两周前, ISO-week weekday semantics, week and month ranges, fuzzy "前几天"). Split from
 * query-dates.ts, where rule matches win over chrono's.
 */
import { DateTime } from 'luxon';
import { daySpan, localDate, monthSpan, pastDayOfMonth, pastMonthDay, rangeSpan, weekdayBefore, weekdayInWeek, weekdayOnOrBefore, weekendSpan, weekSpan, type Candidate, type Span } from './query-date-spans';
import { EN_NUMBER_SOURCE, EN_WEEKDAY, ZH_NUMBER_SOURCE, ZH_WEEKDAY, ZH_WEEKDAY_CHAR_SOURCE, parseChineseNumber, parseEnglishNumber } from './time-words';

const EN_WEEKDAY_SOURCE = '(monday|tuesday|wednesday|thursday|friday|saturday|sunday)';

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

const EN_MONTH: Readonly<Record<string, number>> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12,
};
/** English month names, as alternatives: always inside a group of the pattern that uses them. */
const EN_MONTH_NAME = 'jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?';
/** A month after a day: "of May" always, a bare month name but "may" ("the 5th may be…"). */
const EN_MONTH_AFTER_DAY = `(?:,?\\s+of\\s+(${EN_MONTH_NAME})|,?\\s+(?!may\\b)(${EN_MONTH_NAME}))\\b`;
/** A clock time after a number ("Thursday the 5 pm") makes the number an hour, not a day. */
const NOT_A_TIME = "(?!\\s*(?:am\\b|pm\\b|a\\.m|p\\.m|:|o'clock|h\\b))";
/** What follows a Chinese "N号" that numbers a thing (5号线, 3号楼, 五号电池, 8号选手), not a day. */
const ZH_NOT_A_DAY_AFTER = '(?![线楼房室门位车店床机口座柜台桌馆院栋单层选手球员字码电池人病])';

function enMonth(word: string | undefined): number | undefined {
  return word === undefined ? undefined : EN_MONTH[word.slice(0, 3).toLowerCase()];
}

/**
 * A day of month with an optional month: with the month, the most recent such month-day; without,
 * the most recent date with that day of month. A weekday said with it ("Thursday the 5th", "周四5号")
 * does not move the date: when both agree it is that date; when they disagree the day of month
 * wins (docs/recall.md, "A weekday with a day of month").
 */
function dayOfMonthSpan(today: DateTime, day: number | undefined, month?: number): Span | undefined {
  if (day === undefined) return undefined;
  const dt = month === undefined ? pastDayOfMonth(today, day) : pastMonthDay(today, month, day);
  return dt ? daySpan(dt) : undefined;
}

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
  // 周四5号 / 星期天（8号）/ 周四3月5号: a weekday with a day of month is that date (the weekday
  // rule alone would read it as the last such weekday).
  {
    pattern: new RegExp(
      `(?:(?:上上|上|这|本|下下|下)(?:一|个)?)?(?:周|星期|礼拜)${ZH_WEEKDAY_CHAR_SOURCE}[\\s,，、(（]{0,4}(?:(${NUM})\\s*月\\s*)?(${NUM})\\s*[号日]${ZH_NOT_A_DAY_AFTER}\\s*[)）]?`,
      'gu',
    ),
    resolve: (m, today) => {
      const month = m[1] === undefined ? undefined : parseChineseNumber(m[1]);
      if (m[1] !== undefined && (month === undefined || month < 1 || month > 12)) return undefined;
      return dayOfMonthSpan(today, parseChineseNumber(m[2] ?? ''), month);
    },
  },
  // 5号周四 / 3月5号（周四）: the same, day first.
  {
    pattern: new RegExp(
      `(?<![\\d零〇一二两三四五六七八九十百年第.])(?:(${NUM})\\s*月\\s*)?(${NUM})\\s*[号日][\\s,，、(（]{0,4}(?:周|星期|礼拜)${ZH_WEEKDAY_CHAR_SOURCE}\\s*[)）]?`,
      'gu',
    ),
    resolve: (m, today) => {
      const month = m[1] === undefined ? undefined : parseChineseNumber(m[1]);
      if (m[1] !== undefined && (month === undefined || month < 1 || month > 12)) return undefined;
      return dayOfMonthSpan(today, parseChineseNumber(m[2] ?? ''), month);
    },
  },
  // A bare "5号" ("5号那天"): the most recent 5th. Only 号: a bare "N日" is as often N days (5日游).
  {
    pattern: new RegExp(`(?<![\\d零〇一二两三四五六七八九十百月年第.])(${NUM})\\s*号${ZH_NOT_A_DAY_AFTER}`, 'gu'),
    resolve: (m, today) => dayOfMonthSpan(today, parseChineseNumber(m[1] ?? '')),
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
  // "Thursday the 5th", "Sunday, the 8th of March", "Thursday, March 5th": a weekday with a day
  // of month is that date, not the last such weekday (the weekday rule above alone).
  {
    pattern: new RegExp(
      `\\b(?:(?:last|this|past|previous)\\s+)?${EN_WEEKDAY_SOURCE},?\\s+(?:(?:the\\s+(\\d{1,2})(?:st|nd|rd|th)?|(\\d{1,2})(?:st|nd|rd|th))\\b${NOT_A_TIME}(?:${EN_MONTH_AFTER_DAY})?|(?:the\\s+)?(${EN_MONTH_NAME})\\.?\\s+(?:the\\s+)?(\\d{1,2})(?:st|nd|rd|th)?\\b${NOT_A_TIME})`,
      'giu',
    ),
    resolve: (m, today) => {
      const day = Number(m[2] ?? m[3] ?? m[7]);
      const month = enMonth(m[4] ?? m[5] ?? m[6]);
      return dayOfMonthSpan(today, day, month);
    },
  },
  // "on the 5th", "on the 5th of last month": the most recent 5th. Only after "on" and before the
  // end of the clause or a small word, so "on the 5th floor" or "the 5th time" is no date.
  {
    pattern: /\bon\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b(?:\s+of\s+(this|last|the\s+previous|previous)\s+month\b)?(?=\s*(?:$|[,.;:!?)\]]|(?:at|in|when|and|or|but|we|i|you|he|she|they|did|was|were|is|before|after)\b))/giu,
    resolve: (m, today) => {
      const day = Number(m[1]);
      if (m[2] === undefined) return dayOfMonthSpan(today, day);
      const month = today.plus({ months: m[2].toLowerCase() === 'this' ? 0 : -1 });
      const dt = localDate(month.year, month.month, day, today.zoneName ?? 'UTC');
      return dt ? daySpan(dt) : undefined;
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
export function ruleCandidates(text: string, today: () => DateTime): Candidate[] {
  const out: Candidate[] = [];
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(text); m !== null; m = rule.pattern.exec(text)) {
      rule.pattern.lastIndex = m.index + 1;
      if (m[0].length === 0) continue;
      const span = rule.resolve(m, today(), text);
      if (span) out.push({ ...span, index: m.index, stop: m.index + m[0].length, source: 0 });
    }
  }
  return out;
}
