/**
 * The zone an ISO timestamp's offset implies, for when a user's IANA zone is unknown: a client
 * that sends `now` as "2026-06-12T10:00:00+08:00" lives at UTC+8 today. Only whole-hour offsets
 * map to a zone (IANA's fixed `Etc/GMT±N`, whose sign is inverted by POSIX convention);
 * "Z" maps to UTC; anything else gives no hint.
 */
export function zoneFromIsoOffset(iso: string): string | undefined {
  if (/z$/iu.test(iso)) return 'UTC';
  const m = /([+-])(\d{2}):?(\d{2})$/u.exec(iso);
  if (!m) return undefined;
  const hours = Number(m[2]);
  if (m[3] !== '00' || hours > 14) return undefined;
  if (hours === 0) return 'UTC';
  return `Etc/GMT${m[1] === '+' ? '-' : '+'}${hours}`;
}
