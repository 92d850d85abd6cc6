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
