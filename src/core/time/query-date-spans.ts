/**
 * The spans a date expression of a recall query names, and the calendar math that makes them
 * (whole local days, ISO weeks, months, in the user's zone). Split from query-dates.ts.
 */
import { DateTime } from 'luxon';

export interface DateRange {
  start: Date;
  end: Date;
  /** the matched text */
  text: string;
  granularity: 'day' | 'week' | 'month' | 'range';
}

export type Granularity = DateRange['granularity'];

export interface Span {
  start: DateTime;
  end: DateTime;
  granularity: Granularity;
}

export interface Candidate extends Span {
  index: number;
  stop: number;
  /** 0 = rule here, 1 = chrono: rules win on overlap. */
  source: 0 | 1;
}

// ---------------------------------------------------------------------------------------------
// Calendar helpers (all in the user's zone).
// ---------------------------------------------------------------------------------------------

export function daySpan(day: DateTime): Span {
  const start = day.startOf('day');
  return { start, end: start.plus({ days: 1 }), granularity: 'day' };
}

/** ISO week (Monday start; luxon's startOf('week') is ISO unless locale weeks are requested). */
export function weekSpan(day: DateTime): Span {
  const start = day.startOf('week');
  return { start, end: start.plus({ weeks: 1 }), granularity: 'week' };
}

export function monthSpan(day: DateTime): Span {
  const start = day.startOf('month');
  return { start, end: start.plus({ months: 1 }), granularity: 'month' };
}

/** [first, last] as whole days. */
export function rangeSpan(first: DateTime, lastInclusive: DateTime): Span {
  return { start: first.startOf('day'), end: lastInclusive.startOf('day').plus({ days: 1 }), granularity: 'range' };
}

/** `weekday` (ISO) of the ISO week `weeks` away from `today`'s week. */
export function weekdayInWeek(today: DateTime, weeks: number, weekday: number): DateTime {
  return today.startOf('week').plus({ weeks, days: weekday - 1 });
}

/** The most recent `weekday` on or before `today`. */
export function weekdayOnOrBefore(today: DateTime, weekday: number): DateTime {
  return today.minus({ days: (today.weekday - weekday + 7) % 7 });
}

/** The most recent `weekday` strictly before `today`. */
export function weekdayBefore(today: DateTime, weekday: number): DateTime {
  return today.minus({ days: (today.weekday - weekday + 7) % 7 || 7 });
}

/** Saturday 00:00 to Monday 00:00 of the ISO week `weeks` away. */
export function weekendSpan(today: DateTime, weeks: number): Span {
  return rangeSpan(weekdayInWeek(today, weeks, 6), weekdayInWeek(today, weeks, 7));
}

/** A local date, or undefined when it does not exist (Feb 30). */
export function localDate(year: number, month: number, day: number, zone: string): DateTime | undefined {
  const dt = DateTime.fromObject({ year, month, day }, { zone });
  return dt.isValid && dt.day === day ? dt : undefined;
}

/**
 * The shared-past reading of a month-day without a year: the most recent such date on or before
 * today ("5月2日" asked in March 2026 → 2025-05-02). (chrono itself drops a year-less "2月29日" in
 * a non-leap year, so that one date needs its year spelled out.)
 */
export function pastMonthDay(today: DateTime, month: number, day: number): DateTime | undefined {
  for (let year = today.year; year >= today.year - 8; year -= 1) {
    const dt = localDate(year, month, day, today.zoneName ?? 'UTC');
    if (dt && dt <= today) return dt;
  }
  return undefined;
}

/**
 * The most recent date on or before `today` whose day of month is `day` ("the 5th", "5号" said on
 * March 10 → March 5; said on March 2 → February 5; "the 30th" on March 2 → January 30, February
 * having none). Undefined for a day no month has.
 */
export function pastDayOfMonth(today: DateTime, day: number): DateTime | undefined {
  if (!Number.isInteger(day) || day < 1 || day > 31) return undefined;
  const zone = today.zoneName ?? 'UTC';
  let month = today.startOf('month');
  // Every day 1–31 occurs within any run of two months but February and a 30-day month; three suffice.
  for (let i = 0; i < 3; i += 1, month = month.minus({ months: 1 })) {
    const dt = localDate(month.year, month.month, day, zone);
    if (dt && dt <= today) return dt;
  }
  return undefined;
}
