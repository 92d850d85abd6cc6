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
import { MAX_SENTENCE_CHARS } from '../text/bounds';
import { DateTime } from 'luxon';
import { blankSpans, inZone, normaliseWidth } from './time-words';
import { nextOccurrence } from './recurrence';
import { BLANK, PERIOD_DEFAULT_HOUR, RRULE_DAY, scanTokens, type DatePart, type Period, type Recurrence, type TimePart, type Token } from './reminder-tokens';

export { PERIOD_DEFAULT_HOUR } from './reminder-tokens';

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
