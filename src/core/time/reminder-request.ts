/**
 * Recognises explicit reminder requests ("提醒我明天下午三点开会", "remind me in 2 hours to
 * stretch", "每天早上8点提醒我喝水") and resolves when they are due.
 *
 * Pure: no clock, no I/O. Times resolve against the message's own timestamp `saidAt`, read in the
 * user's IANA zone with luxon, so "tomorrow at 9" is 09:00 local even across a DST change.
 *
 * Division of labour, and why:
 * - Chinese time words are matched by small rules here: chrono.zh ignores the reference time zone,
 *   misses 后天/大后天/N号, and reads "两点一刻" as 02:01.
 * - English times and dates ("tomorrow at 3pm", "on Friday at 9", "at 10:30 tonight", "June 15")
 *   and zh absolute dates ("6月2日") come from chrono, run on a floating reference (see
 *   {@link floatingReference}) over the text left after the rules' matches are blanked out;
 *   only chrono's calendar components are used.
 * - Durations ("in 2 hours", "半小时后") are added to the instant, not to the wall clock, so
 *   they stay exact across DST; recurrences are expanded by {@link nextOccurrence}.
 */
import * as chrono from 'chrono-node';
import { MAX_SENTENCE_CHARS, squeezeSpaces } from '../text/bounds';
import { DateTime } from 'luxon';
import {
  EN_NUMBER_SOURCE,
  EN_WEEKDAY,
  ZH_NUMBER_SOURCE,
  ZH_WEEKDAY,
  ZH_WEEKDAY_CHAR_SOURCE,
  blankSpans,
  floatingReference,
  inZone,
  normaliseWidth,
  parseChineseNumber,
  parseEnglishNumber,
} from './query-dates';
import { nextOccurrence } from './recurrence';

/** A reminder the user explicitly asked for. */
export interface ReminderRequest {
  /** What to remind, e.g. "开会" / "call mom"; '' when the message names nothing ("明早8点叫我"). */
  text: string;
  /** When it is due (for a recurring reminder: its first occurrence after `saidAt`). */
  dueAt: Date;
  timeZone: string;
  /** True when the user gave no exact time of day and we defaulted (see PERIOD_DEFAULT_HOUR). */
  assumedTime: boolean;
  /** RFC 5545 RRULE (no "RRULE:" prefix) for "每天早上8点" / "every Monday at 9". */
  rrule?: string;
  /** The recognised part of the message: from the first to the last time word or trigger phrase. */
  matched: string;
}

/** Parts of the day that may stand in for an hour ("下午提醒我", "tomorrow morning"). */
type Period = 'dawn' | 'morning' | 'forenoon' | 'noon' | 'afternoon' | 'dusk' | 'evening';

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

type DatePart =
  | { kind: 'offset'; days: number; months: number }
  | { kind: 'weekday'; weekday: number; mode: 'bare' | 'this' | 'next' | 'nextnext' }
  | { kind: 'date'; year?: number; month: number; day: number }
  | { kind: 'monthDay'; day: number; monthOffset?: number };

interface TimePart {
  hour: number;
  minute: number;
  /** am/pm is settled (explicit "pm", a 24-hour value, or chrono's "tonight"). */
  meridiemKnown: boolean;
  period?: Period;
}

interface Recurrence {
  freq: 'DAILY' | 'WEEKLY' | 'MONTHLY';
  byDay?: number[];
  byMonthDay?: number;
}

interface Token {
  index: number;
  stop: number;
  date?: DatePart;
  time?: TimePart;
  period?: Period;
  durationMinutes?: number;
  recur?: Recurrence;
}

/** Marks blanked time words while the task text is cleaned (a private-use code point). */
const BLANK = '\uE000';

const NUM = ZH_NUMBER_SOURCE;
const WD = ZH_WEEKDAY_CHAR_SOURCE;
const RRULE_DAY = ['', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;

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

function scanTokens(sentence: string, said: DateTime): Token[] {
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

// ---------------------------------------------------------------------------------------------
// Triggers, negations and the "is this really a request" check.
// ---------------------------------------------------------------------------------------------

const TRIGGER = /提醒(?:一下|下)?我|叫醒我|叫我|喊我|通知我|\bremind\s+me\b|\bwake\s+me(?:\s+up)?\b/giu;
const NEGATED = [
  // Only the trigger verbs: "提醒我明天不要叫外卖" is a request whose task is negative.
  /(?:不要|[别甭勿]|不用|不必|无需|不需要|没必要|不再|不想|不许|不准)\s*(?:[你再去]+\s*)?(?:提醒|叫醒?我|喊我|通知)/u,
  /提醒过|提醒了(?!解)|提醒我(?:过|了(?!解)|的(?!时候))|(?:已经|刚才|之前|上次)提醒/u,
  /\b(?:don'?t|do\s+not|never|no\s+need\s+to|stop|quit|no\s+longer|not)\s+(?:to\s+)?(?:remind|wake)/iu,
  // "remind me what/who/of…" asks the assistant to recall something now, not to schedule.
  /\bremind\s+me\s+(?:again\s+)?(?:what|who|whom|where|when|why|how|which|whether|if|of)\b/iu,
];
/** Politeness and request words that may precede the trigger ("请明天提醒我", "can you remind me"). */
const FILLER =
  /请|麻烦|帮忙|帮我|[帮您你在于要再就还也]|能不能|能否|可不可以|可以|记得|记着|别忘了|别忘记|不要忘了|不要忘记|到时候|到时|一定|务必|好的|[好嗯]|那就|[那想让]|我想让|我想|希望|需要|[我嘿喂]|小助手|助手|的时候|\b(?:please|pls|plz|can|could|would|will|you|u|hey|hi|hello|jarvis|ok|okay|and|also|just|then|so|oh|yes|yeah|sure|kindly|i|i'd|want|need|like|to|go\s+ahead\s+and)\b/giu;
const PUNCT_OR_SPACE = /[\s\p{P}\p{S}]/gu;

function isOnlyFiller(text: string): boolean {
  return text.replaceAll(BLANK, ' ').replace(FILLER, '').replace(PUNCT_OR_SPACE, '') === '';
}

/** [start, end) of the sentence around `index`; "." ends a sentence only before a space or the end. */
function sentenceBounds(text: string, index: number): [number, number] {
  // Not after a lone letter: "3 p.m. to call" must stay one sentence.
  const boundary = /[。！？!?；;\n]|(?<!\b\p{L})\.(?=\s|$)/gu;
  let start = 0;
  let end = text.length;
  for (let m = boundary.exec(text); m !== null; m = boundary.exec(text)) {
    if (m.index < index) start = m.index + 1;
    else {
      end = m.index;
      break;
    }
  }
  return [start, end];
}

function cleanTask(raw: string): string {
  // A preposition right before a removed time word belongs to it ("on June 15", "by Friday").
  let s = raw
    .replace(new RegExp(`\\b(?:on|at|by|in|around|before|from|for|until)\\s*${BLANK}+`, 'giu'), ' ')
    .replaceAll(BLANK, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
  // Blanked time words leave spaces inside Chinese text ("去 开会").
  s = s.replace(/(?<=\p{Script=Han}) (?=\p{Script=Han})/gu, '');
  let previous: string;
  do {
    previous = s;
    s = s
      .replace(/^[\s,，:：、]+/u, '')
      // Only filler: "去机场"/"把衣服收了"/"下楼" keep their verbs.
      .replace(/^(?:一下|记得)(?=\p{Script=Han})/u, '')
      .replace(/^(?:to|that|about|of)\s+/iu, '')
      .replace(/(?<![\s,，。.!！~～、])[\s,，。.!！~～、]+$/u, '')
      .replace(/[哦啊呀吧哈啦喔噢哟]$/u, '')
      .replace(/(?<!\s)\s+(?:by|on|at|in|for|from|around|about|before)$/iu, '')
      .trim();
  } while (s !== previous);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Resolution.
// ---------------------------------------------------------------------------------------------

/**
 * 24-hour hour from a spoken hour and part of day. Without am/pm or a part of day, 1–5 o'clock
 * is read as the afternoon ("三点开会", "at 3"): people rarely ask for 3 a.m. reminders.
 * 晚上12点 is midnight at the end of that day (returned as 24).
 */
function toHour24(hour: number, period: Period | undefined, meridiemKnown: boolean): number {
  if (meridiemKnown) return hour;
  switch (period) {
    case 'afternoon':
    case 'dusk':
      return hour < 12 ? hour + 12 : hour;
    case 'evening':
      return hour === 12 ? 24 : hour < 12 ? hour + 12 : hour;
    case 'noon':
      return hour >= 1 && hour <= 2 ? hour + 12 : hour;
    case 'dawn':
      return hour === 12 ? 0 : hour;
    case 'morning':
    case 'forenoon':
      return hour;
    default:
      return hour >= 1 && hour <= 5 ? hour + 12 : hour;
  }
}

interface ClockTime {
  hour: number;
  minute: number;
  assumed: boolean;
}

function clockTime(time: TimePart | undefined, period: Period | undefined, defaultHour: number): ClockTime {
  if (time) {
    return { hour: toHour24(time.hour, time.period ?? period, time.meridiemKnown), minute: time.minute, assumed: false };
  }
  if (period && period !== 'dawn') return { hour: PERIOD_DEFAULT_HOUR[period], minute: 0, assumed: true };
  return { hour: defaultHour, minute: 0, assumed: true };
}

/** Local wall time on a date; a time inside a DST gap moves forward. Hour 24 = next day 00:00. */
function at(year: number, month: number, day: number, clock: ClockTime, zone: string): DateTime | undefined {
  const date = DateTime.fromObject({ year, month, day }, { zone });
  if (!date.isValid || date.day !== day) return undefined;
  const target = clock.hour >= 24 ? date.plus({ days: 1 }) : date;
  const due = DateTime.fromObject(
    { year: target.year, month: target.month, day: target.day, hour: clock.hour % 24, minute: clock.minute },
    { zone },
  );
  // A wall time that occurs twice (autumn) means its first instance, as in recurrence.ts.
  return due.getPossibleOffsets().reduce((earliest, c) => (c < earliest ? c : earliest), due);
}

function atDay(day: DateTime, clock: ClockTime, zone: string): DateTime | undefined {
  return at(day.year, day.month, day.day, clock, zone);
}

/**
 * Future semantics: a bare weekday is the next one after `said` (today if today is that day and
 * the time is still ahead); "this X" is X of the current ISO week, or the bare reading once it has
 * passed; "next X"/"下周X" is X of the next ISO (Monday-start) week. A month-day without a year is
 * its next occurrence; an explicitly dated time already in the past is returned as is.
 */
function resolveDate(date: DatePart | undefined, clock: ClockTime, said: DateTime, zone: string): DateTime | undefined {
  const today = said.startOf('day');
  if (!date) {
    const due = atDay(today, clock, zone);
    return due && due > said ? due : atDay(today.plus({ days: 1 }), clock, zone);
  }
  switch (date.kind) {
    case 'offset':
      return atDay(today.plus({ days: date.days, months: date.months }), clock, zone);
    case 'weekday': {
      const bare = (): DateTime | undefined => {
        const day = today.plus({ days: (date.weekday - today.weekday + 7) % 7 });
        const due = atDay(day, clock, zone);
        return due && due > said ? due : atDay(day.plus({ days: 7 }), clock, zone);
      };
      if (date.mode === 'bare') return bare();
      const weeks = date.mode === 'this' ? 0 : date.mode === 'next' ? 1 : 2;
      const due = atDay(today.startOf('week').plus({ weeks, days: date.weekday - 1 }), clock, zone);
      return date.mode === 'this' && (!due || due <= said) ? bare() : due;
    }
    case 'date': {
      if (date.year !== undefined) return at(date.year, date.month, date.day, clock, zone);
      for (let year = today.year; year <= today.year + 8; year += 1) {
        const due = at(year, date.month, date.day, clock, zone);
        if (due && due > said) return due;
      }
      return undefined;
    }
    case 'monthDay': {
      if (date.monthOffset !== undefined) {
        const month = today.startOf('month').plus({ months: date.monthOffset });
        return at(month.year, month.month, date.day, clock, zone);
      }
      for (let k = 0; k <= 12; k += 1) {
        const month = today.startOf('month').plus({ months: k });
        const due = at(month.year, month.month, date.day, clock, zone);
        if (due && due > said) return due;
      }
      return undefined;
    }
  }
}

function buildRrule(recur: Recurrence, clock: ClockTime, said: DateTime): string {
  const parts = [`FREQ=${recur.freq}`];
  if (recur.freq === 'WEEKLY') {
    const days = recur.byDay && recur.byDay.length > 0 ? recur.byDay : [said.weekday];
    parts.push(`BYDAY=${days.map((d) => RRULE_DAY[d]).join(',')}`);
  }
  if (recur.freq === 'MONTHLY') parts.push(`BYMONTHDAY=${recur.byMonthDay ?? said.day}`);
  parts.push(`BYHOUR=${clock.hour % 24}`, `BYMINUTE=${clock.minute}`);
  return parts.join(';');
}

/**
 * Recognises an explicit reminder request in one user message; times resolve against the
 * message's own timestamp `saidAt` in the user's zone. Returns undefined when the message is not
 * a reminder request.
 *
 * A request needs a trigger (提醒我 / 叫我 / 喊我 / 通知我 / remind me / wake me up) that is not
 * negated ("别提醒我", "don't remind me"), not about the past ("你提醒过我的事"), not a recall
 * question ("remind me what…"), and not said by someone else ("老板提醒我…": only time words and
 * politeness may precede the trigger in its sentence). It also needs a time: "提醒我喝水" with no
 * time at all is returned as undefined so the caller can ask when.
 *
 * Time rules: no time of day → `defaultHour` (09:00), or the part-of-day default
 * ({@link PERIOD_DEFAULT_HOUR}, e.g. 上午 → 09:00, 下午 → 15:00), with `assumedTime: true`. A time
 * without a date is the next such time (today if still ahead, else tomorrow). Bare 1–5 o'clock
 * means p.m. Durations ("in 2 hours") are exact instants. Recurrences get an RRULE with
 * BYHOUR/BYMINUTE and `dueAt` = the first occurrence after `saidAt`.
 *
 * @throws RangeError for an invalid zone or a `defaultHour` outside 0–23.
 */
export function parseReminderRequest(
  message: string,
  opts: { saidAt: Date; timeZone: string; defaultHour?: number },
): ReminderRequest | undefined {
  const zone = opts.timeZone;
  const said = inZone(opts.saidAt, zone);
  const defaultHour = opts.defaultHour ?? 9;
  if (!Number.isInteger(defaultHour) || defaultHour < 0 || defaultHour > 23) {
    throw new RangeError(`defaultHour must be an integer 0-23, got ${defaultHour}`);
  }
  const text = normaliseWidth(message);

  TRIGGER.lastIndex = 0;
  const trigger = TRIGGER.exec(text);
  if (!trigger) return undefined;
  const [wholeStart, wholeEnd] = sentenceBounds(text, trigger.index);
  // A run-on "sentence" is read only around its trigger: a request is said in one breath.
  const sentenceStart = Math.max(wholeStart, trigger.index - MAX_SENTENCE_CHARS);
  const sentenceEnd = Math.min(wholeEnd, trigger.index + MAX_SENTENCE_CHARS);
  const sentence = text.slice(sentenceStart, sentenceEnd);
  if (NEGATED.some((re) => re.test(sentence))) return undefined;
  const triggerStart = trigger.index - sentenceStart;
  const triggerStop = triggerStart + trigger[0].length;

  const tokens = scanTokens(sentence, said).filter((t) => t.stop <= triggerStart || t.index >= triggerStop);
  if (tokens.length === 0) return undefined;

  const before = blankSpans(sentence.slice(0, triggerStart), tokens.filter((t) => t.stop <= triggerStart), BLANK);
  let task = cleanTask(blankSpans(sentence, tokens, BLANK).slice(triggerStop));
  if (!isOnlyFiller(before)) {
    // "开会的事明天提醒我": the task may come first, but only when nothing follows the trigger;
    // otherwise the words before it are a third party ("老板提醒我明天开会").
    const lead = cleanTask(before);
    const taskFirst = /^(.+?)(?:的事情?|这件事|这事)$/u.exec(lead);
    if (task !== '' || !taskFirst?.[1]) return undefined;
    task = taskFirst[1];
  }
  if (task === '' && /叫醒我|wake/iu.test(trigger[0])) task = /wake/iu.test(trigger[0]) ? 'wake up' : '起床';

  const first = <T>(pick: (t: Token) => T | undefined): T | undefined => {
    for (const t of tokens) {
      const v = pick(t);
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const recur = first((t) => t.recur);
  const durationMinutes = first((t) => t.durationMinutes);
  const date = first((t) => t.date);
  const time = first((t) => t.time);
  const period = first((t) => t.period);

  const spanStart = Math.min(triggerStart, ...tokens.map((t) => t.index));
  const spanStop = Math.max(triggerStop, ...tokens.map((t) => t.stop));
  const matched = message.slice(sentenceStart + spanStart, sentenceStart + spanStop);
  const clock = clockTime(time, period, defaultHour);

  if (recur) {
    const rrule = buildRrule(recur, clock, said);
    const dueAt = nextOccurrence(rrule, opts.saidAt, zone);
    if (!dueAt) return undefined;
    return { text: task, dueAt, timeZone: zone, assumedTime: clock.assumed, rrule, matched };
  }
  if (durationMinutes !== undefined) {
    const dueAt = new Date(opts.saidAt.getTime() + Math.round(durationMinutes * 60_000));
    return { text: task, dueAt, timeZone: zone, assumedTime: false, matched };
  }
  if (!date && !time && !period) return undefined;
  const due = resolveDate(date, clock, said, zone);
  if (!due || !due.isValid) return undefined;
  return { text: task, dueAt: due.toJSDate(), timeZone: zone, assumedTime: clock.assumed, matched };
}
