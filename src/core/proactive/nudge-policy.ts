/**
 * Whether a proactive nudge goes out now. Pure: the workflow passes its deterministic random draw
 * (`Math.random()` inside a Temporal workflow is seeded and replay-safe), the local time, and how
 * many nudges were sent today.
 */
import { DateTime } from 'luxon';
import { clockMinutes, type ProactiveSettings, type QuietHours } from './settings';
import type { NudgeTrigger } from './nudge-triggers';

export type NudgeDecision =
  | { send: true; trigger: NudgeTrigger; draw: number }
  | { send: false; reason: 'opted-out' | 'quiet-hours' | 'daily-cap' | 'no-trigger' | 'probability'; draw?: number };

/** True when the local time of `at` in `timeZone` falls inside the quiet window (which may wrap midnight). */
export function inQuietHours(at: Date, timeZone: string, quiet: QuietHours): boolean {
  const local = DateTime.fromJSDate(at, { zone: timeZone });
  const minutes = local.hour * 60 + local.minute;
  const start = clockMinutes(quiet.start);
  const end = clockMinutes(quiet.end);
  if (start === end) return false;
  return start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
}

/**
 * When the quiet window that `at` falls in ends, in `timeZone`'s wall-clock time: the same local day
 * when the end is still ahead (03:00 in 22:00–08:00 → 08:00 today), else the next day (23:00 →
 * 08:00 tomorrow). Luxon keeps the wall clock across a DST change (the next day's 08:00 is 08:00
 * whatever the offset) and moves an end that falls in a spring-forward gap to the first instant
 * after it. Undefined when `at` is not in quiet hours (or the window is empty).
 */
export function quietHoursEnd(at: Date, timeZone: string, quiet: QuietHours): Date | undefined {
  if (!inQuietHours(at, timeZone, quiet)) return undefined;
  const end = clockMinutes(quiet.end);
  const local = DateTime.fromJSDate(at, { zone: timeZone });
  const clock = { hour: Math.floor(end / 60), minute: end % 60, second: 0, millisecond: 0 };
  const today = local.set(clock);
  const next = today > local ? today : local.plus({ days: 1 }).set(clock);
  return next.toJSDate();
}

/** No quiet window: start and end equal. */
const NEVER_QUIET: QuietHours = { start: '00:00', end: '00:00' };

/**
 * When a refused nudge is worth trying again: only when quiet hours are the one refusal (the same
 * decision with no quiet window would send), at the end of the window. Opted out, capped for today,
 * nothing to say or the draw above the probability: undefined, the nudge is dropped.
 */
export function deferUntilQuietEnds(
  context: { settings: { proactive: ProactiveSettings; timezone: string }; sentToday: number; triggers: readonly NudgeTrigger[] },
  now: Date,
  draw: number,
): Date | undefined {
  const { proactive, timezone } = context.settings;
  const decision = decideNudgeFrom(context, now, draw);
  if (decision.send || decision.reason !== 'quiet-hours') return undefined;
  const without = decideNudgeFrom({ ...context, settings: { ...context.settings, proactive: { ...proactive, quietHours: NEVER_QUIET } } }, now, draw);
  return without.send ? quietHoursEnd(now, timezone, proactive.quietHours) : undefined;
}

/**
 * The checks in the order a person would apply them: opted out → never; quiet hours → not now;
 * today's cap reached → not today; nothing worth saying → nothing; otherwise speak with the
 * configured probability, about the most pressing trigger (they arrive sorted by priority).
 */
export function decideNudge(input: {
  settings: ProactiveSettings;
  timeZone: string;
  now: Date;
  sentToday: number;
  triggers: readonly NudgeTrigger[];
  draw: number;
}): NudgeDecision {
  const { settings } = input;
  if (!settings.enabled) return { send: false, reason: 'opted-out' };
  if (inQuietHours(input.now, input.timeZone, settings.quietHours)) return { send: false, reason: 'quiet-hours' };
  if (input.sentToday >= settings.maxPerDay) return { send: false, reason: 'daily-cap' };
  const trigger = input.triggers[0];
  if (!trigger) return { send: false, reason: 'no-trigger' };
  if (!(input.draw < settings.probability)) return { send: false, reason: 'probability', draw: input.draw };
  return { send: true, trigger, draw: input.draw };
}

/** {@link decideNudge} over what a nudge activity loaded for one user (the scheduled and the recall-led nudge share it). */
export function decideNudgeFrom(
  context: { settings: { proactive: ProactiveSettings; timezone: string }; sentToday: number; triggers: readonly NudgeTrigger[] },
  now: Date,
  draw: number,
): NudgeDecision {
  return decideNudge({ settings: context.settings.proactive, timeZone: context.settings.timezone, now, sentToday: context.sentToday, triggers: context.triggers, draw });
}
