/**
 * Thin helpers over the `rrule` library for recurring reminders ("每天早上8点", "every Monday at 9").
 *
 * Pure: no clock, no I/O. "Now" is always the `after` parameter.
 *
 * Why "floating" time: rrule's own TZID support converts through the host's local zone and gets
 * DST wrong in places. A reminder rule is about *wall-clock* time in the user's zone ("08:00 every
 * day, whatever the UTC offset"), so the rule is expanded in floating time (a `Date` whose UTC
 * fields hold the local wall clock, i.e. no zone at all) and each occurrence is only then pinned
 * to the user's IANA zone with luxon. A daily 08:00 rule thus stays at 08:00 local across DST.
 */
import * as rruleModule from 'rrule';
import { DateTime } from 'luxon';
import type { Options } from 'rrule';

type RRuleModule = typeof rruleModule;
// Under plain Node ESM the package's CommonJS/UMD build exposes its API only on `default`; bundlers
// (and the type declarations) see named exports. Accept both shapes.
const rruleLib: RRuleModule = (rruleModule as RRuleModule & { default?: RRuleModule }).default ?? rruleModule;
const { RRule, Frequency } = rruleLib;

/** How far ahead `nextOccurrence` looks before giving up (rules such as "Feb 30" never occur). */
const SEARCH_YEARS = 10;
/** Reminders closer together than this are almost certainly a parsing bug, not a wish. */
const MIN_SPACING_MINUTES = 5;
/** Occurrences (from the first, within a day and an hour of it) whose spacing validateRrule checks. */
const SPACING_SAMPLE = 400;
const SPACING_WINDOW_MS = 25 * 3_600_000;

/** Result of {@link validateRrule}. */
export type RruleValidation = { ok: true } | { ok: false; reason: string };

interface ParsedRule {
  options: Partial<Options>;
  /** DTSTART from the string, already converted to floating wall time in the target zone. */
  dtstart?: Date;
}

/** A luxon DateTime's wall-clock fields as a floating Date (UTC fields = local wall clock). */
function toFloating(dt: DateTime): Date {
  return new Date(Date.UTC(dt.year, dt.month - 1, dt.day, dt.hour, dt.minute, dt.second));
}

/**
 * Pins a floating Date (UTC fields = wall clock) to `zone`. In a DST gap luxon moves it forward;
 * a wall time that occurs twice takes its first instance (luxon alone would pick the second).
 */
function fromFloating(floating: Date, zone: string): DateTime {
  const dt = DateTime.fromObject(
    {
      year: floating.getUTCFullYear(),
      month: floating.getUTCMonth() + 1,
      day: floating.getUTCDate(),
      hour: floating.getUTCHours(),
      minute: floating.getUTCMinutes(),
      second: floating.getUTCSeconds(),
    },
    { zone },
  );
  return dt.getPossibleOffsets().reduce((earliest, c) => (c < earliest ? c : earliest), dt);
}

function assertZone(timeZone: string): void {
  if (!DateTime.now().setZone(timeZone).isValid) throw new RangeError(`Invalid IANA time zone: ${timeZone}`);
}

/**
 * Parses an RRULE (with or without the "RRULE:" prefix, optionally preceded by a DTSTART line)
 * and converts zoned DTSTART / UNTIL values into floating wall time in `zone`.
 */
function parseRule(rule: string, zone: string): ParsedRule {
  const text = rule.trim();
  const options: Partial<Options> = RRule.parseString(text);
  const result: ParsedRule = { options };

  // parseString returns DTSTART/UNTIL as Dates whose UTC fields are the literal digits; whether
  // those digits are UTC ("Z"), in a TZID, or floating is only visible in the raw text.
  const dtstartMatch = /DTSTART(?:;TZID=([^:;\s]+))?:(\d{8}(?:T\d{6})?)(Z?)/iu.exec(text);
  if (options.dtstart && dtstartMatch) {
    const [, tzid, , utc] = dtstartMatch;
    const literal = options.dtstart;
    if (utc) result.dtstart = toFloating(DateTime.fromJSDate(literal, { zone: zone }));
    else if (tzid && tzid !== zone) result.dtstart = toFloating(fromFloating(literal, tzid).setZone(zone));
    else result.dtstart = literal;
  }
  delete options.dtstart;
  delete options.tzid;

  if (options.until) {
    const utcUntil = /UNTIL=\d{8}T\d{6}Z/iu.test(text);
    if (utcUntil) options.until = toFloating(DateTime.fromJSDate(options.until, { zone }));
  }
  return result;
}

function isIntList(value: unknown, min: number, max: number, allowZero = true): boolean {
  const items = Array.isArray(value) ? (value as unknown[]) : [value];
  return items.every(
    (v) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max && (allowZero || v !== 0),
  );
}

/** Range checks rrule itself skips (it happily accepts BYHOUR=25 or BYHOUR=abc). */
function checkOptions(options: Partial<Options>): string | undefined {
  if (options.freq === undefined || options.freq === null) return 'missing or unknown FREQ';
  if (options.freq === Frequency.SECONDLY) return 'FREQ=SECONDLY is not allowed for reminders';
  const interval = options.interval ?? 1;
  if (!isIntList(interval, 1, 10_000)) return 'INTERVAL must be a positive integer';
  if (options.freq === Frequency.MINUTELY && interval < MIN_SPACING_MINUTES) {
    return `FREQ=MINUTELY needs INTERVAL>=${MIN_SPACING_MINUTES}`;
  }
  if (options.count !== undefined && options.count !== null && !isIntList(options.count, 1, 1_000_000)) {
    return 'COUNT must be a positive integer';
  }
  const ranges: [keyof Options, number, number, boolean][] = [
    ['byhour', 0, 23, true],
    ['byminute', 0, 59, true],
    ['bysecond', 0, 59, true],
    ['bymonth', 1, 12, true],
    ['bymonthday', -31, 31, false],
    ['byyearday', -366, 366, false],
    ['byweekno', -53, 53, false],
    ['bysetpos', -366, 366, false],
  ];
  for (const [key, min, max, allowZero] of ranges) {
    const value = options[key];
    if (value === undefined || value === null) continue;
    if (!isIntList(value, min, max, allowZero)) return `${String(key).toUpperCase()} out of range`;
  }
  if (options.byweekday !== undefined && options.byweekday !== null) {
    const days = Array.isArray(options.byweekday) ? options.byweekday : [options.byweekday];
    if (days.some((d) => d === undefined || d === null)) return 'BYDAY has an unknown weekday';
  }
  return undefined;
}

/** BYxxx parts that pick days within a year or month: with them a rule may skip whole periods. */
const DAY_FILTERS = ['bymonth', 'bymonthday', 'byyearday', 'byweekno', 'bysetpos'] as const;

function present(value: unknown): boolean {
  return value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);
}

/** The ordinals of weekdays such as "1MO" or "-1FR" (their meaning depends on the period, month or year). */
function weekdayOrdinals(options: Partial<Options>): number[] {
  const days = options.byweekday === undefined || options.byweekday === null ? [] : Array.isArray(options.byweekday) ? options.byweekday : [options.byweekday];
  return days.flatMap((d) => (typeof d === 'object' && d !== null && 'n' in d && typeof d.n === 'number' && d.n !== 0 ? [d.n] : []));
}

function hasNthWeekday(options: Partial<Options>): boolean {
  return weekdayOrdinals(options).length > 0;
}

/**
 * Shapes whose occurrences the rrule library can only look for by stepping period after period,
 * to the year 9999 when there is none: it tests the end of the series only on days that pass the
 * filters. "FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30" held the API's event loop for 20–35 s. Days that
 * never exist are refused by {@link daysExist}; with INTERVAL > 1 the interval's phase can also
 * miss every day the filters allow (DAILY;INTERVAL=14;BYDAY=MO from a Tuesday), so only WEEKLY
 * with plain weekdays, and MONTHLY with days 1–28 (or -1…-28) or weekdays up to the 4th, may
 * filter days then.
 */
function costlyShape(options: Partial<Options>): string | undefined {
  if ((options.interval ?? 1) <= 1) return undefined;
  const freq = options.freq;
  const filtered = DAY_FILTERS.filter((key) => present(options[key]));
  const nth = hasNthWeekday(options);
  const weekdays = present(options.byweekday);
  const ok =
    (freq === Frequency.WEEKLY && filtered.length === 0 && !nth) ||
    // Every month has days 1–28 and four of each weekday.
    (freq === Frequency.MONTHLY &&
      filtered.every((key) => key === 'bymonthday') &&
      isIntList(options.bymonthday ?? 1, -28, 28, false) &&
      weekdayOrdinals(options).every((n) => Math.abs(n) <= 4) &&
      !(weekdays && present(options.bymonthday))) ||
    (filtered.length === 0 && !weekdays);
  return ok ? undefined : 'INTERVAL above 1 with BYMONTH, BYMONTHDAY, BYYEARDAY, BYWEEKNO, BYSETPOS or BYDAY can skip every allowed day: use INTERVAL=1, or WEEKLY with BYDAY, or MONTHLY with BYMONTHDAY up to 28 or BYDAY up to the 4th';
}

/**
 * Whether the days the rule allows exist at all. Tried at the end of the calendar, where the
 * library stops at the year 9999 after 30 years whatever the rule: those years hold every kind
 * of year (14 weekday and leap combinations, no century in between), so a day pattern that never
 * occurs there never occurs. Only for INTERVAL=1 (costlyShape): then the phase does not matter.
 */
function daysExist(options: Partial<Options>): boolean {
  // Plain weekday and date filters mean the same days whatever the period, so a yearly probe
  // (30 steps) answers for a daily or weekly rule too; ordinals and BYSETPOS count within the
  // rule's own period, so those keep it.
  const yearly = !hasNthWeekday(options) && !present(options.bysetpos) && (options.freq ?? Frequency.YEARLY) > Frequency.MONTHLY;
  const probe = new RRule({ ...options, ...(yearly ? { freq: Frequency.YEARLY, byhour: 0, byminute: 0, bysecond: 0 } : {}), dtstart: new Date(Date.UTC(9970, 0, 1)), count: 1, until: null });
  return probe.all().length > 0;
}

/**
 * Checks that a string is a usable RFC 5545 RRULE for a reminder: it parses, has a FREQ, every
 * BYxxx value is in range, it does not fire more often than every 5 minutes, and it occurs at
 * least once within 10 years of its start (so "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30" is rejected).
 * Accepts an optional "RRULE:" prefix and an optional leading DTSTART line.
 */
export function validateRrule(rrule: string): RruleValidation {
  if (typeof rrule !== 'string' || rrule.trim() === '') return { ok: false, reason: 'empty rule' };
  let parsed: ParsedRule;
  try {
    parsed = parseRule(rrule, 'UTC');
  } catch (error) {
    return { ok: false, reason: `unparseable: ${(error as Error).message}` };
  }
  const problem = checkOptions(parsed.options) ?? costlyShape(parsed.options);
  if (problem) return { ok: false, reason: problem };
  try {
    if ((parsed.options.interval ?? 1) <= 1 && !daysExist(parsed.options)) return { ok: false, reason: 'no occurrence: the days it names never exist' };
  } catch (error) {
    return { ok: false, reason: `invalid rule: ${(error as Error).message}` };
  }
  // Any fixed anchor works for "can it ever occur"; a DTSTART in the string is respected so
  // that COUNT/UNTIL are judged against the real series start.
  const anchor = parsed.dtstart ?? new Date(Date.UTC(2000, 0, 1));
  try {
    const rule = new RRule({ ...parsed.options, dtstart: anchor });
    const horizon = new Date(anchor.getTime());
    horizon.setUTCFullYear(horizon.getUTCFullYear() + SEARCH_YEARS);
    let first: Date | undefined;
    rule.between(anchor, horizon, true, (occurrence) => {
      first = occurrence;
      return false;
    });
    if (!first) return { ok: false, reason: `no occurrence within ${SEARCH_YEARS} years of its start` };
    // The spacing the BYxxx lists make, not only FREQ and INTERVAL: FREQ=HOURLY with BYMINUTE=0,…,59
    // and BYSECOND=0,…,59 passed the FREQ check and fired every second. Sub-daily lists repeat
    // within a day, so the day after the first occurrence shows the tightest spacing (and is
    // cheap to expand, whatever the rule).
    const sample: Date[] = [];
    rule.between(first, new Date(first.getTime() + SPACING_WINDOW_MS), true, (occurrence) => {
      sample.push(occurrence);
      return sample.length < SPACING_SAMPLE;
    });
    for (let i = 1; i < sample.length; i++) {
      if (sample[i]!.getTime() - sample[i - 1]!.getTime() < MIN_SPACING_MINUTES * 60_000) {
        return { ok: false, reason: `occurrences ${sample[i - 1]!.toISOString().slice(11, 19)} and ${sample[i]!.toISOString().slice(11, 19)} are less than ${MIN_SPACING_MINUTES} minutes apart` };
      }
    }
  } catch (error) {
    return { ok: false, reason: `invalid rule: ${(error as Error).message}` };
  }
  return { ok: true };
}

/**
 * The first occurrence of `rrule` strictly after the instant `after`, evaluated in wall-clock time
 * of `timeZone` (so "BYHOUR=8" means 08:00 local on every date, in summer and winter alike).
 *
 * Series anchor: `opts.dtstart`, else a DTSTART inside the string, else `after` itself (truncated
 * to the minute). The anchor only matters for parts the rule leaves open — INTERVAL phase, COUNT,
 * and a missing BYHOUR/BYDAY/BYMONTHDAY (taken from the anchor's time, weekday and day).
 *
 * DST: a wall time that does not exist (02:30 on a spring-forward day) fires at the shifted time
 * luxon picks (03:30); a wall time that occurs twice (autumn) fires once, at its first instance.
 *
 * @returns undefined when the series has ended (COUNT/UNTIL) or never occurs within 10 years.
 * @throws RangeError for an invalid zone; Error for an unparseable rule.
 */
export function nextOccurrence(
  rrule: string,
  after: Date,
  timeZone: string,
  opts: { dtstart?: Date } = {},
): Date | undefined {
  assertZone(timeZone);
  const parsed = parseRule(rrule, timeZone);
  const problem = checkOptions(parsed.options);
  if (problem) throw new Error(`Invalid RRULE "${rrule}": ${problem}`);

  const afterLocal = DateTime.fromJSDate(after, { zone: timeZone });
  const dtstart = opts.dtstart
    ? toFloating(DateTime.fromJSDate(opts.dtstart, { zone: timeZone }))
    : (parsed.dtstart ?? toFloating(afterLocal.startOf('minute')));
  const rule = new RRule({ ...parsed.options, dtstart });

  // Start a day early: around an autumn fall-back the floating time of `after` can be an hour
  // "ahead" of an occurrence that is still in the future as an instant.
  const from = toFloating(afterLocal.minus({ days: 1 }));
  const to = toFloating(afterLocal.plus({ years: SEARCH_YEARS }));
  let next: Date | undefined;
  rule.between(from, to, true, (occurrence) => {
    const instant = fromFloating(occurrence, timeZone);
    if (instant.toMillis() > after.getTime()) {
      next = instant.toJSDate();
      return false;
    }
    return true;
  });
  return next;
}
