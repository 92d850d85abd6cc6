/**
 * The time words of a reminder request as tokens: the Chinese rules, chrono's English and zh
 * absolute dates over what the rules left, and the longest-match choice among overlapping
 * readings. Split from reminder-request.ts, which resolves the tokens to a due time.
 */
import * as chrono from 'chrono-node';
import { squeezeSpaces } from '../text/bounds';
import type { DateTime } from 'luxon';
import { EN_NUMBER_SOURCE, EN_WEEKDAY, ZH_NUMBER_SOURCE, ZH_WEEKDAY, ZH_WEEKDAY_CHAR_SOURCE, blankSpans, floatingReference, parseChineseNumber, parseEnglishNumber } from './time-words';

/** Parts of the day that may stand in for an hour ("下午提醒我", "tomorrow morning"). */
export type Period = 'dawn' | 'morning' | 'forenoon' | 'noon' | 'afternoon' | 'dusk' | 'evening';

/**
 * The time used when only a part of the day is given (assumedTime = true). 早上/明早 wake-up
 * style words → 08:00; 上午 and English "morning" → 09:00 (office hours); 中午 → 12:00;
 * 下午/afternoon → 15:00; 傍晚 → 18:00; 晚上/今晚/tonight/evening → 20:00.
 */
export const PERIOD_DEFAULT_HOUR: Readonly<Record<Exclude<Period, 'dawn'>, number>> = {
  morning: 8,
  forenoon: 9,
  noon: 12,
  afternoon: 15,
  dusk: 18,
  evening: 20,
};

export type DatePart =
  | { kind: 'offset'; days: number; months: number }
  | { kind: 'weekday'; weekday: number; mode: 'bare' | 'this' | 'next' | 'nextnext' }
  | { kind: 'date'; year?: number; month: number; day: number }
  | { kind: 'monthDay'; day: number; monthOffset?: number };

export interface TimePart {
  hour: number;
  minute: number;
  /** am/pm is settled (explicit "pm", a 24-hour value, or chrono's "tonight"). */
  meridiemKnown: boolean;
  period?: Period;
}

export interface Recurrence {
  freq: 'DAILY' | 'WEEKLY' | 'MONTHLY';
  byDay?: number[];
  byMonthDay?: number;
}

export interface Token {
  index: number;
  stop: number;
  date?: DatePart;
  time?: TimePart;
  period?: Period;
  durationMinutes?: number;
  recur?: Recurrence;
}

/** Marks blanked time words while the task text is cleaned (a private-use code point). */
export const BLANK = '\uE000';

const NUM = ZH_NUMBER_SOURCE;
const WD = ZH_WEEKDAY_CHAR_SOURCE;
export const RRULE_DAY = ['', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;

const ZH_PERIOD: Readonly<Record<string, Period>> = {
  早上: 'morning', 早晨: 'morning', 清晨: 'morning', 一早: 'morning',
  上午: 'forenoon',
  中午: 'noon', 正午: 'noon',
  下午: 'afternoon', 午后: 'afternoon',
  傍晚: 'dusk',
  晚上: 'evening', 晚间: 'evening', 夜里: 'evening', 夜间: 'evening', 深夜: 'evening',
  凌晨: 'dawn', 半夜: 'dawn',
};
const ZH_PERIOD_SOURCE = Object.keys(ZH_PERIOD).join('|');

const ZH_DAY: Readonly<Record<string, [number, Period?]>> = {
  今天: [0], 今日: [0], 今儿: [0], 今早: [0, 'morning'], 今晨: [0, 'morning'], 今晚: [0, 'evening'],
  今夜: [0, 'evening'], 明天: [1], 明日: [1], 明儿: [1], 明早: [1, 'morning'], 明晨: [1, 'morning'],
  明晚: [1, 'evening'], 后天: [2], 大后天: [3],
};

const ZH_MODE: Readonly<Record<string, 'this' | 'next' | 'nextnext'>> = { 这: 'this', 本: 'this', 下: 'next', 下下: 'nextnext' };

const EN_PERIOD_TAG: Readonly<Record<string, Period>> = {
  'casualReference/morning': 'forenoon',
  'casualReference/noon': 'noon',
  'casualReference/afternoon': 'afternoon',
  'casualReference/evening': 'evening',
  'casualReference/tonight': 'evening',
  'casualReference/night': 'evening',
};

function zhWeekdays(list: string): number[] {
  const out: number[] = [];
  for (const ch of list) {
    const d = ZH_WEEKDAY[ch];
    if (d !== undefined && !out.includes(d)) out.push(d);
  }
  return out;
}

function enWeekdays(list: string): number[] {
  const out: number[] = [];
  for (const m of list.toLowerCase().matchAll(/monday|tuesday|wednesday|thursday|friday|saturday|sunday/gu)) {
    const d = EN_WEEKDAY[m[0]];
    if (d !== undefined && !out.includes(d)) out.push(d);
  }
  return out;
}

interface Rule {
  pattern: RegExp;
  make(m: RegExpExecArray, text: string): Omit<Token, 'index' | 'stop'> | undefined;
}

const EN_WEEKDAY_WORD = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const EN_AMOUNT = `(?:(\\d+\\.\\d+)|${EN_NUMBER_SOURCE})`;

const RULES: readonly Rule[] = [
  // --- recurrences -------------------------------------------------------------------------
  {
    pattern: /每天|每日|天天|每一天|每晚|每早/gu,
    make: (m) => ({
      recur: { freq: 'DAILY' },
      ...(m[0] === '每晚' ? { period: 'evening' as const } : m[0] === '每早' ? { period: 'morning' as const } : {}),
    }),
  },
  { pattern: /(?:每个?)?工作日/gu, make: () => ({ recur: { freq: 'WEEKLY', byDay: [1, 2, 3, 4, 5] } }) },
  {
    pattern: new RegExp(
      `每(?:个|一)?(?:周|星期|礼拜)(${WD}(?:\\s*[、,，和及与跟]\\s*(?:周|星期|礼拜)?${WD})*)?(?!末)`,
      'gu',
    ),
    make: (m) => ({ recur: { freq: 'WEEKLY', ...(m[1] ? { byDay: zhWeekdays(m[1]) } : {}) } }),
  },
  {
    pattern: new RegExp(`每(?:个|一)?月(?:\\s*(${NUM})\\s*[号日])?`, 'gu'),
    make: (m) => {
      const day = m[1] === undefined ? undefined : parseChineseNumber(m[1]);
      if (day !== undefined && (day < 1 || day > 31)) return undefined;
      return { recur: { freq: 'MONTHLY', ...(day !== undefined ? { byMonthDay: day } : {}) } };
    },
  },
  {
    pattern: /\b(?:every|each)\s+(day|morning|afternoon|evening|night)\b|\b(daily|nightly)\b/giu,
    make: (m) => {
      const word = (m[1] ?? m[2] ?? '').toLowerCase();
      const period: Period | undefined =
        word === 'morning' ? 'forenoon' : word === 'afternoon' ? 'afternoon' : word === 'evening' || word === 'night' || word === 'nightly' ? 'evening' : undefined;
      return { recur: { freq: 'DAILY' }, ...(period ? { period } : {}) };
    },
  },
  {
    pattern: /\b(?:every|each)\s+(?:weekday|work\s?day|business\s+day)\b|\bon\s+weekdays\b/giu,
    make: () => ({ recur: { freq: 'WEEKLY', byDay: [1, 2, 3, 4, 5] } }),
  },
  {
    pattern: new RegExp(
      `\\b(?:every|each)\\s+${EN_WEEKDAY_WORD}(?:\\s*(?:,|and|&)\\s*${EN_WEEKDAY_WORD})*\\b|\\bon\\s+${EN_WEEKDAY_WORD}s(?:\\s*(?:,|and|&)\\s*${EN_WEEKDAY_WORD}s)*\\b`,
      'giu',
    ),
    make: (m) => ({ recur: { freq: 'WEEKLY', byDay: enWeekdays(m[0]) } }),
  },
  { pattern: /\b(?:every|each)\s+week\b|\bweekly\b/giu, make: () => ({ recur: { freq: 'WEEKLY' } }) },
  {
    pattern: /\b(?:every|each)\s+month(?:\s+on\s+the\s+(\d{1,2})(?:st|nd|rd|th)?)?\b|\bmonthly\b|\bon\s+the\s+(\d{1,2})(?:st|nd|rd|th)?\s+of\s+(?:every|each)\s+month\b/giu,
    make: (m) => {
      const raw = m[1] ?? m[2];
      const day = raw === undefined ? undefined : Number.parseInt(raw, 10);
      if (day !== undefined && (day < 1 || day > 31)) return undefined;
      return { recur: { freq: 'MONTHLY', ...(day !== undefined ? { byMonthDay: day } : {}) } };
    },
  },

  // --- durations and relative days ---------------------------------------------------------
  // 半小时后 / 一个半小时后 / 2个小时后 / 过10分钟 / 3天后 / 两周后 / 一个月后.
  {
    pattern: new RegExp(
      // Each optional part takes its own leading spaces, so a run of spaces has one reading:
      // four bare \\s* around optional groups backtracked in n⁴ (issue #20).
      `(?:(过)\\s*)?(?:(?<![\\d零〇一二两三四五六七八九十百])(${NUM})(?:\\s*个)?(?:\\s*(半))?|(半))(?:\\s*个)?\\s*(分钟|小时|钟头|天|日|周|星期|礼拜|月)(?:\\s*[以之]?(后))?`,
      'gu',
    ),
    make: (m) => {
      if (!m[1] && !m[6]) return undefined; // "3天" alone is a length, not a time
      const whole = m[2] === undefined ? 0 : parseChineseNumber(m[2]);
      if (whole === undefined) return undefined;
      const amount = whole + (m[3] || m[4] ? 0.5 : 0);
      const unit = m[5];
      if (unit === '分钟') return { durationMinutes: amount };
      if (unit === '小时' || unit === '钟头') return { durationMinutes: amount * 60 };
      if (!Number.isInteger(amount)) return undefined;
      if (unit === '月') return { date: { kind: 'offset', days: 0, months: amount } };
      const days = unit === '天' || unit === '日' ? amount : amount * 7;
      return { date: { kind: 'offset', days, months: 0 } };
    },
  },
  // in 2 hours / in half an hour / in an hour and a half / in 3 days / 20 minutes from now.
  {
    pattern: new RegExp(
      `\\bin\\s+(?:(half\\s+an?\\s+hour)|(an?\\s+hour\\s+and\\s+a\\s+half)|${EN_AMOUNT}\\s+(minutes?|mins?|hours?|hrs?|days?|weeks?|months?))\\b|\\b${EN_AMOUNT}\\s+(minutes?|mins?|hours?|hrs?)\\s+(?:from\\s+now|later)\\b`,
      'giu',
    ),
    make: (m) => {
      if (m[1]) return { durationMinutes: 30 };
      if (m[2]) return { durationMinutes: 90 };
      const amount = m[3] ? Number.parseFloat(m[3]) : m[4] ? parseEnglishNumber(m[4]) : m[6] ? Number.parseFloat(m[6]) : parseEnglishNumber(m[7] ?? '');
      const unit = (m[5] ?? m[8] ?? '').toLowerCase();
      if (amount === undefined || Number.isNaN(amount)) return undefined;
      if (unit.startsWith('min')) return { durationMinutes: amount };
      if (unit.startsWith('h')) return { durationMinutes: amount * 60 };
      if (!Number.isInteger(amount)) return undefined;
      if (unit.startsWith('month')) return { date: { kind: 'offset', days: 0, months: amount } };
      return { date: { kind: 'offset', days: unit.startsWith('week') ? amount * 7 : amount, months: 0 } };
    },
  },
  {
    pattern: /大后天|后天|今天|今日|今儿|今早|今晨|今晚|今夜|明天|明日|明儿|明早|明晨|明晚/gu,
    make: (m) => {
      const [days, period] = ZH_DAY[m[0]] ?? [0];
      return { date: { kind: 'offset', days, months: 0 }, ...(period ? { period } : {}) };
    },
  },

  // --- weekdays, weeks, month days ---------------------------------------------------------
  // 周五 / 这周五 / 下周一 / 下下周三. 上周X is the past and never a reminder time.
  {
    pattern: new RegExp(`(?:(这|本|下下|下)(?:一|个)?)?(?:周|星期|礼拜)(${WD})`, 'gu'),
    make: (m, text) => {
      const weekday = ZH_WEEKDAY[m[2] ?? ''];
      if (weekday === undefined) return undefined;
      if (m[1] === undefined && /[每上几\d零〇一二两三四五六七八九十]/u.test(text[m.index - 1] ?? '')) return undefined;
      return { date: { kind: 'weekday', weekday, mode: m[1] === undefined ? 'bare' : (ZH_MODE[m[1]] ?? 'bare') } };
    },
  },
  // 下周 → Monday of next week; 周末/这周末 → Saturday; 下周末 → next week's Saturday.
  {
    pattern: new RegExp(`(下下|下)(?:一|个)?(?:周|星期|礼拜)(?!${WD}|末)|(?:(这|本|下)(?:个)?)?周末`, 'gu'),
    make: (m, text) => {
      if (m[1]) return { date: { kind: 'weekday', weekday: 1, mode: m[1] === '下下' ? 'nextnext' : 'next' } };
      if (text[m.index - 1] === '每' || text[m.index - 1] === '上') return undefined;
      return { date: { kind: 'weekday', weekday: 6, mode: m[2] === '下' ? 'next' : 'bare' } };
    },
  },
  // 下个月3号 / 15号 / 这个月20日 (chrono.zh has no bare day-of-month); 下个月 → its 1st.
  {
    pattern: new RegExp(`(?:(这|本|下)个?月\\s*)?(${NUM})\\s*[号日](?![线楼房门床位机院车店窗桌子])|(下)个?月(?!\\s*${NUM})`, 'gu'),
    make: (m, text) => {
      if (m[3]) return { date: { kind: 'monthDay', day: 1, monthOffset: 1 } };
      if (m[1] === undefined && /[月\d年]/u.test(text[m.index - 1] ?? '')) return undefined; // "5月2日" is chrono's
      const day = parseChineseNumber(m[2] ?? '');
      if (day === undefined || day < 1 || day > 31) return undefined;
      return { date: { kind: 'monthDay', day, ...(m[1] !== undefined ? { monthOffset: m[1] === '下' ? 1 : 0 } : {}) } };
    },
  },
  {
    pattern: /\bnext\s+(week|month|weekend)\b|\b(?:this|the|on\s+the|at\s+the)\s+weekend\b/giu,
    make: (m) => {
      const unit = m[1]?.toLowerCase();
      if (unit === 'week') return { date: { kind: 'weekday', weekday: 1, mode: 'next' } };
      if (unit === 'month') return { date: { kind: 'monthDay', day: 1, monthOffset: 1 } };
      return { date: { kind: 'weekday', weekday: 6, mode: unit === 'weekend' ? 'next' : 'bare' } };
    },
  },

  // --- times of day ------------------------------------------------------------------------
  // 三点 / 下午三点半 / 十点一刻 / 8点30分 / 晚上9:30 / 凌晨两点.
  {
    pattern: new RegExp(
      `(?:(${ZH_PERIOD_SOURCE})\\s*)?(\\d{1,2}|[零〇一二两三四五六七八九十]{1,3})\\s*(点钟|点|點鐘|點|时|時)(?:\\s*(半|一刻|三刻|整|(\\d{1,2}|[零〇一二三四五六七八九十]{1,3})\\s*分?))?|(${ZH_PERIOD_SOURCE})\\s*(\\d{1,2})\\s*[:：]\\s*(\\d{2})`,
      'gu',
    ),
    make: (m, text) => {
      if (m[6]) {
        const hour = Number.parseInt(m[7] ?? '', 10);
        const minute = Number.parseInt(m[8] ?? '', 10);
        if (hour > 24 || minute > 59) return undefined;
        return { time: { hour, minute, meridiemKnown: false, period: ZH_PERIOD[m[6]] } };
      }
      const hourText = m[2] ?? '';
      const hour = parseChineseNumber(hourText);
      if (hour === undefined || hour > 24) return undefined;
      const isDigit = /^\d+$/u.test(hourText);
      // 时 after a Chinese numeral is usually not a clock ("一时兴起").
      if ((m[3] === '时' || m[3] === '時') && !isDigit) return undefined;
      const minutePart = m[4];
      const minute =
        minutePart === undefined || minutePart === '整' ? 0
        : minutePart === '半' ? 30
        : minutePart === '一刻' ? 15
        : minutePart === '三刻' ? 45
        : parseChineseNumber(m[5] ?? '');
      if (minute === undefined || minute > 59) return undefined;
      // "有一点/快一点/两点建议" mean "a bit"/"two points", not 01:00/02:00.
      const bare = !m[1] && minutePart === undefined && !isDigit && !m[3]?.endsWith('钟');
      if (bare && (/[有快早多慢小好大少差些]/u.test(text[m.index - 1] ?? '') || /^[儿水东西建议要意]/u.test(text.slice(m.index + m[0].length)))) {
        return undefined;
      }
      return { time: { hour, minute, meridiemKnown: false, ...(m[1] ? { period: ZH_PERIOD[m[1]] } : {}) } };
    },
  },
  // 上午 / 下午 / 晚上 with no hour (凌晨/半夜 have no sensible default and are left out).
  {
    pattern: /早上|早晨|清晨|一早|上午|中午|正午|下午|午后|傍晚|晚上|晚间|夜里|夜间|深夜/gu,
    make: (m) => ({ period: ZH_PERIOD[m[0]] }),
  },
];

/**
 * All matches of all rules, including overlapping ones (each scan restarts one character after
 * the previous match start): "下周一早上" must yield "早上" even though "一早" matches first.
 * The longest-match resolution picks among them.
 */
function ruleTokens(text: string): Token[] {
  const out: Token[] = [];
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(text); m !== null; m = rule.pattern.exec(text)) {
      rule.pattern.lastIndex = m.index + 1;
      if (m[0].length === 0) continue;
      const made = rule.make(m, text);
      if (made) out.push({ ...made, index: m.index, stop: m.index + m[0].length });
    }
  }
  return out;
}

function chronoToken(result: chrono.ParsedResult, lang: 'en' | 'zh'): Token | undefined {
  const { start } = result;
  const tags = result.tags();
  // "now" is not a reminder time; chrono's "in 2 hours" is handled (exactly) by a rule.
  if (tags.has('casualReference/now') || tags.has('result/relativeDateAndTime')) return undefined;
  const token: Token = { index: result.index, stop: result.index + result.text.length };

  if (start.isCertain('day') && start.isCertain('month')) {
    const month = start.get('month') ?? 1;
    const day = start.get('day') ?? 1;
    token.date = start.isCertain('year') ? { kind: 'date', year: start.get('year') ?? undefined, month, day } : { kind: 'date', month, day };
  } else if (start.isCertain('weekday')) {
    // chrono reads "sat", "sun", "wed" inside ordinary English as weekdays; require a real name.
    if (!/\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/iu.test(result.text) &&
      !/\b(?:Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)\b/u.test(result.text)) {
      return undefined;
    }
    if (/\blast\b/iu.test(result.text)) return undefined;
    const chronoWeekday = start.get('weekday') ?? 0;
    const mode = /\bnext\b/iu.test(result.text) ? 'next' : /\bthis\b/iu.test(result.text) ? 'this' : 'bare';
    token.date = { kind: 'weekday', weekday: chronoWeekday === 0 ? 7 : chronoWeekday, mode };
  }

  // Chinese clock times ("三点", "一点") are the rules' job: those rules reject readings such as
  // "多喝一点水" on purpose, and chrono.zh would bring them back. Colon times ("9:30") stay.
  const zhClock = lang === 'zh' && /[点點时時]/u.test(result.text);
  if (start.isCertain('hour') && !zhClock) {
    const hour = start.get('hour') ?? 0;
    token.time = {
      hour,
      minute: start.get('minute') ?? 0,
      meridiemKnown: start.isCertain('meridiem') || hour >= 12 || hour === 0,
    };
  }
  for (const tag of tags) {
    const period = EN_PERIOD_TAG[tag];
    if (period) token.period = period;
  }
  return token.date || token.time || token.period ? token : undefined;
}

/** Longer matches first; a candidate overlapping an accepted one is dropped. */
function resolveOverlaps(tokens: Token[]): Token[] {
  const ordered = [...tokens].sort((a, b) => b.stop - b.index - (a.stop - a.index) || a.index - b.index);
  const kept: Token[] = [];
  for (const t of ordered) if (kept.every((k) => t.stop <= k.index || t.index >= k.stop)) kept.push(t);
  return kept.sort((a, b) => a.index - b.index);
}

export function scanTokens(sentence: string, said: DateTime): Token[] {
  const ruled = resolveOverlaps(ruleTokens(sentence));
  const rest = blankSpans(sentence, ruled);
  const reference = floatingReference(said);
  // chrono's zh date patterns put `\s*` and `[\s|,|，]*` side by side and backtracked in about
  // n³ on a digit then a run of spaces (12 s on 1000 spaces, issue #20). They are not ours to
  // rewrite, so chrono reads the sentence with each whitespace run squeezed to one space, and
  // its offsets are mapped back.
  const squeezed = squeezeSpaces(rest);
  const fromChrono: Token[] = [];
  const add = (token: Token | undefined): void => {
    if (token) fromChrono.push({ ...token, index: squeezed.original(token.index), stop: squeezed.original(token.stop - 1) + 1 });
  };
  for (const result of chrono.en.casual.parse(squeezed.text, reference)) add(chronoToken(result, 'en'));
  for (const result of chrono.zh.casual.parse(squeezed.text, reference)) add(chronoToken(result, 'zh'));
  return [...ruled, ...resolveOverlaps(fromChrono)].sort((a, b) => a.index - b.index);
}
