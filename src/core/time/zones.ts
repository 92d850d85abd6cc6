import { IANAZone } from 'luxon';

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
