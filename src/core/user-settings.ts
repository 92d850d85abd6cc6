/**
 * Per-user settings (the account's; proactive work reads them): timezone, when the daily digest
 * comes, and how chatty nudges may be. Stored in users.timezone and users.settings (jsonb); read
 * tolerantly so a missing or older shape falls back to the defaults instead of failing a workflow.
 */

/** A local wall-clock time "HH:MM" (24 h). */
export type ClockTime = string;

export interface QuietHours {
  start: ClockTime;
  end: ClockTime;
}

export interface ProactiveSettings {
  /** Opt-out switch for everything the user did not explicitly ask for (nudges, digest pushes). */
  enabled: boolean;
  /** Chance that a due trigger actually produces a nudge (0–1), drawn per check. */
  probability: number;
  /** At most this many nudges per local day. */
  maxPerDay: number;
  /** No nudges in this local window; it may wrap midnight (22:00–08:00). */
  quietHours: QuietHours;
}

export interface UserSettings {
  timezone: string;
  digestTime: ClockTime;
  proactive: ProactiveSettings;
}

export const DEFAULT_DIGEST_TIME: ClockTime = '22:00';
export const DEFAULT_PROACTIVE: Readonly<ProactiveSettings> = {
  enabled: true,
  probability: 0.3,
  maxPerDay: 2,
  quietHours: { start: '22:00', end: '08:00' },
};

const CLOCK = /^([01]\d|2[0-3]):([0-5]\d)$/;

export function isClockTime(value: unknown): value is ClockTime {
  return typeof value === 'string' && CLOCK.test(value);
}

/** "07:30" → {hour: 7, minute: 30}. @throws RangeError for anything else. */
export function parseClockTime(value: ClockTime): { hour: number; minute: number } {
  const m = CLOCK.exec(value);
  if (!m) throw new RangeError(`expected HH:MM (00:00–23:59), got "${value}"`);
  return { hour: Number(m[1]), minute: Number(m[2]) };
}

/** Minutes after local midnight. */
export function clockMinutes(value: ClockTime): number {
  const { hour, minute } = parseClockTime(value);
  return hour * 60 + minute;
}

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * Settings from the stored columns, each field falling back to its default when absent or
 * malformed (the API validates writes; this only guards against old or hand-edited rows).
 */
export function resolveSettings(timezone: string, stored: unknown, defaults: { digestTime?: ClockTime } = {}): UserSettings {
  const s = obj(stored);
  const p = obj(s.proactive);
  const q = obj(p.quietHours);
  const probability = typeof p.probability === 'number' && p.probability >= 0 && p.probability <= 1 ? p.probability : DEFAULT_PROACTIVE.probability;
  const maxPerDay = typeof p.maxPerDay === 'number' && Number.isInteger(p.maxPerDay) && p.maxPerDay >= 0 ? p.maxPerDay : DEFAULT_PROACTIVE.maxPerDay;
  return {
    timezone,
    digestTime: isClockTime(s.digestTime) ? s.digestTime : (defaults.digestTime ?? DEFAULT_DIGEST_TIME),
    proactive: {
      enabled: typeof p.enabled === 'boolean' ? p.enabled : DEFAULT_PROACTIVE.enabled,
      probability,
      maxPerDay,
      quietHours: {
        start: isClockTime(q.start) ? q.start : DEFAULT_PROACTIVE.quietHours.start,
        end: isClockTime(q.end) ? q.end : DEFAULT_PROACTIVE.quietHours.end,
      },
    },
  };
}
