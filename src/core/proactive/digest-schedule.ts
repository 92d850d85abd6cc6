/**
 * When the daily digest runs: a local wall-clock time in the user's zone, every day. The Temporal
 * Schedule gets a calendar spec with the zone (the server then keeps 22:00 local across DST); the
 * same rule is computed here with luxon for tests, previews and the digest's own "which day" logic.
 */
import { DateTime } from 'luxon';
import { parseClockTime, type ClockTime } from './settings';

/** The calendar part of a Temporal ScheduleSpec (kept free of SDK types so it stays pure). */
export interface DigestCalendarSpec {
  calendars: { hour: number; minute: number; comment: string }[];
  timezone: string;
}

export function digestCalendarSpec(digestTime: ClockTime, timeZone: string): DigestCalendarSpec {
  const { hour, minute } = parseClockTime(digestTime);
  return { calendars: [{ hour, minute, comment: `daily digest at ${digestTime} ${timeZone}` }], timezone: timeZone };
}

/**
 * The next `count` digest instants strictly after `after`. A local time that does not exist on a
 * spring-forward day (02:30) runs at the shifted time luxon picks; one that occurs twice runs once.
 *
 * @throws RangeError for an invalid zone or clock time.
 */
export function nextDigestTimes(after: Date, timeZone: string, digestTime: ClockTime, count = 1): Date[] {
  const { hour, minute } = parseClockTime(digestTime);
  const start = DateTime.fromJSDate(after, { zone: timeZone });
  if (!start.isValid) throw new RangeError(`Invalid IANA time zone: ${timeZone}`);
  const out: Date[] = [];
  for (let day = start.startOf('day'); out.length < count; day = day.plus({ days: 1 })) {
    const at = day.set({ hour, minute, second: 0, millisecond: 0 });
    if (at.toMillis() > after.getTime()) out.push(at.toJSDate());
  }
  return out;
}

/** The local calendar day ("2026-03-08") and its [start, end) instants that a digest run at `at` covers. */
export function digestDay(at: Date, timeZone: string): { date: string; start: Date; end: Date } {
  const local = DateTime.fromJSDate(at, { zone: timeZone });
  if (!local.isValid) throw new RangeError(`Invalid IANA time zone: ${timeZone}`);
  const start = local.startOf('day');
  return { date: start.toISODate()!, start: start.toJSDate(), end: start.plus({ days: 1 }).toJSDate() };
}
