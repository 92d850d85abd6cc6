import { DateTime, IANAZone } from 'luxon';
import { boundedMemo, boundedScopedMemo } from '../bounded-memo';

/**
 * Zone names already checked, valid or not. luxon's `IANAZone.isValidZone` builds an
 * `Intl.DateTimeFormat` on every call — a fraction of a millisecond of CPU, taken several times
 * per recall. The answer for a name never changes within a process. Bounded, because the names
 * come from requests: past the bound, names are checked without being remembered.
 */
const checked = new Map<string, boolean>();
const MAX_REMEMBERED = 1024;

/** Whether `zone` names a real IANA time zone (or `UTC`), as luxon decides. */
export function isValidTimeZone(zone: string | undefined | null): zone is string {
  if (!zone) return false;
  const known = checked.get(zone);
  if (known !== undefined) return known;
  const valid = IANAZone.isValidZone(zone);
  if (checked.size < MAX_REMEMBERED) checked.set(zone, valid);
  return valid;
}

/**
 * The zone as tzdata spells it. luxon (ICU) reads zone names case-insensitively, but Temporal
 * Schedules (Go's tzdata) do not: a settings timezone of "utc" or "asia/shanghai" passed
 * validation, was stored, and then every schedule update failed (503, and no daily digest).
 * A name that differs from ICU's only in case takes ICU's spelling ("asia/shanghai" →
 * "Asia/Shanghai"); one typed all in one case that ICU knows under another name takes that name
 * ("etc/utc" → "UTC"); any other valid name ("Asia/Kolkata", a link ICU reports as
 * "Asia/Calcutta") is kept as given. Call only with a zone {@link isValidTimeZone} accepted.
 */
export function canonicalTimeZone(zone: string): string {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return zone;
  }
  if (resolved.toLowerCase() === zone.toLowerCase()) return resolved;
  return zone === zone.toLowerCase() || zone === zone.toUpperCase() ? resolved : zone;
}

/**
 * One formatter per zone and set of fields (bounded as above), null for a zone Intl does not
 * know: building one costs more than a hundred dates.
 */
function formattersOf(options: Intl.DateTimeFormatOptions): (zone: string) => Intl.DateTimeFormat | null {
  const formatters = new Map<string, Intl.DateTimeFormat | null>();
  return (zone) => {
    let formatter = formatters.get(zone);
    if (formatter === undefined) {
      try {
        formatter = new Intl.DateTimeFormat('en-US', { ...options, timeZone: zone, calendar: 'gregory', numberingSystem: 'latn' });
      } catch {
        formatter = null;
      }
      if (formatters.size < MAX_REMEMBERED) formatters.set(zone, formatter);
    }
    return formatter;
  };
}

const dayFormatter = formattersOf({ year: 'numeric', month: '2-digit', day: '2-digit' });
const clockFormatter = formattersOf({ year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', hourCycle: 'h23' });

/**
 * The calendar date of `date` in `zone` as YYYY-MM-DD: what luxon's
 * `DateTime.fromJSDate(date, { zone }).toISODate()` answers, in one `formatToParts` instead of
 * luxon's offset lookups (a third of a recall's formatting in a zone other than UTC). Years
 * outside 1000–9999, which ISO writes with a sign or padding, and zones Intl does not know go
 * to luxon itself.
 */
export function isoDateIn(date: Date, zone: string): string | null {
  return placedDays(zone, date.getTime());
}

/**
 * Dates already placed in a zone, by zone and epoch milliseconds: a recall renders the same
 * memories' dates again and again, and even one `formatToParts` is most of a line's formatting.
 */
const placedDays = boundedScopedMemo(20_000, (zone, ms) => dayOf(new Date(ms), zone));

/**
 * `date.toISOString()`, remembered by the instant: a recall's response lists the same memories'
 * times on every message, and each `toISOString` takes about 0.75 µs. Throws as it does for an
 * invalid date.
 */
export function isoInstant(date: Date): string {
  return isoInstants(date.getTime());
}

const isoInstants = boundedMemo(20_000, (ms: number) => new Date(ms).toISOString());

function dayOf(date: Date, zone: string): string | null {
  const formatter = dayFormatter(zone);
  if (formatter && !Number.isNaN(date.getTime())) {
    let year = '';
    let month = '';
    let day = '';
    for (const part of formatter.formatToParts(date)) {
      if (part.type === 'year') year = part.value;
      else if (part.type === 'month') month = part.value;
      else if (part.type === 'day') day = part.value;
    }
    if (year.length === 4 && year >= '1000' && month.length === 2 && day.length === 2) return `${year}-${month}-${day}`;
  }
  return DateTime.fromJSDate(date, { zone }).toISODate();
}

/**
 * The wall clock of `date` in `zone`, to the second, as a Date whose *host-local* fields carry it:
 * what `floatingReference(DateTime.fromJSDate(date, { zone }))` answers (time-words.ts), in one
 * `formatToParts` instead of luxon's two offset lookups — a date parser's reference on every
 * recall. Null where luxon must answer: a name luxon reads otherwise than as an IANA zone
 * ("utc+8", "local"), one Intl does not know, or a year outside 1000–9999.
 */
export function wallClockIn(date: Date, zone: string): Date | null {
  if (!isValidTimeZone(zone) || Number.isNaN(date.getTime())) return null;
  const formatter = clockFormatter(zone);
  if (!formatter) return null;
  const fields = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatter.formatToParts(date)) {
    if (part.type in fields) fields[part.type as keyof typeof fields] = Number(part.value);
  }
  if (!(fields.year >= 1000 && fields.year <= 9999)) return null;
  return new Date(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second);
}
