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
import { ruleCandidates } from './query-date-rules';
import { daySpan, localDate, monthSpan, pastMonthDay, rangeSpan, type Candidate, type DateRange, type Span } from './query-date-spans';
import { blankSpans, floatingReference, inZone, normaliseWidth } from './time-words';
import { wallClockIn } from './zones';

export type { DateRange } from './query-date-spans';
/** The shared time words, re-exported for the modules that import them from here. */
export { EN_NUMBER, EN_NUMBER_SOURCE, EN_WEEKDAY, ZH_NUMBER_SOURCE, ZH_WEEKDAY, ZH_WEEKDAY_CHAR_SOURCE, blankSpans, floatingReference, inZone, normaliseWidth, parseChineseNumber, parseEnglishNumber } from './time-words';

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

/**
 * Which of chrono's parsers can find anything in `text`. The two were half of a recall's date
 * parsing, and many messages are in one language: every zh pattern needs a Han character or a
 * digit (its time and ISO patterns), every en pattern a Latin letter or a digit. What one of them
 * can never match is not asked (test/core/time/query-dates.test.ts runs each over texts it skips).
 */
export function chronoLocalesFor(text: string): { zh: boolean; en: boolean } {
  const digit = /\p{Nd}/u.test(text);
  return { zh: digit || /\p{Script=Han}/u.test(text), en: digit || /\p{Script=Latin}/u.test(text) };
}

function chronoCandidates(text: string, today: () => DateTime, reference: Date): Candidate[] {
  // chrono reads the query with whitespace runs squeezed and at most a sentence of it: its zh
  // patterns backtrack on long whitespace and numeral runs (5 s on 8000 "一"), ours read it all.
  const squeezed = squeezeSpaces(cutAt(text, MAX_SENTENCE_CHARS));
  const { zh, en } = chronoLocalesFor(squeezed.text);
  const results = [...(zh ? chrono.zh.casual.parse(squeezed.text, reference) : []), ...(en ? chrono.en.casual.parse(squeezed.text, reference) : [])];
  const out: Candidate[] = [];
  for (const result of results) {
    const span = chronoSpan(result, squeezed.text, today());
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
  // luxon's zone arithmetic (an offset lookup for the instant, another for its midnight) only for
  // a query that holds a date: most hold none, and chrono's reference needs the wall clock alone.
  // Where Intl cannot answer, luxon does (and throws for a zone that is no zone).
  const reference = wallClockIn(opts.now, opts.timeZone) ?? floatingReference(inZone(opts.now, opts.timeZone));
  let today: DateTime | undefined;
  const todayOf = (): DateTime => (today ??= inZone(opts.now, opts.timeZone).startOf('day'));
  const text = normaliseWidth(query);
  const ruled = resolveOverlaps(ruleCandidates(text, todayOf));
  const chronoFound = chronoCandidates(blankSpans(text, ruled), todayOf, reference);
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
