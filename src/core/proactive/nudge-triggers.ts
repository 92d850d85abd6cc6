/**
 * What is worth a proactive word: a pain point that keeps coming back, a goal whose deadline is
 * near, a reminder that is coming up. Pure: memories and reminders are passed in, "now" too.
 */
import * as chrono from 'chrono-node';
import { DateTime } from 'luxon';
import { cutAt, MAX_SENTENCE_CHARS, squeezeSpaces } from '../text/bounds';
import { floatingReference, inZone, normaliseWidth } from '../time/query-dates';

/** The `_recalled` kinds come from a recall that hit the memory (src/core/proactive/recall-nudge.ts), the others from the schedule. */
export type NudgeTriggerKind = 'pain_point_recurring' | 'goal_deadline' | 'reminder_upcoming' | 'pain_point_recalled' | 'goal_recalled';

export interface NudgeTrigger {
  kind: NudgeTriggerKind;
  /** Stable per subject: the same trigger nudges at most once a day (idempotency key part). */
  key: string;
  /** The memory or reminder text the nudge talks about. */
  subject: string;
  memoryId?: string;
  reminderId?: string;
  /** goal_deadline: whole days left; reminder_upcoming: minutes left. */
  daysLeft?: number;
  minutesLeft?: number;
  /** Higher first. */
  priority: number;
}

export interface TriggerMemory {
  id: string;
  text: string;
  type: string;
  frequencyCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface TriggerReminder {
  id: string;
  text: string;
  dueAt: Date;
}

/** A pain point counts as recurring once it was stated this many times… */
export const RECURRING_PAIN_MIN_FREQUENCY = 3;
/** …and came up again within this many days. */
export const RECURRING_PAIN_WINDOW_DAYS = 14;
/** Goals whose deadline is at most this many days away. */
export const GOAL_DEADLINE_DAYS = 7;
/** Reminders due within this many minutes. */
export const REMINDER_LOOKAHEAD_MINUTES = 120;

const YEAR_END = /年底|年末|年内|今年(?:之?内|底)|(?:by |before )?(?:the )?end of (?:the |this )?year|by year[- ]end/iu;
const MONTH_END = /月底|月末|本月之?内|这个月(?:之?内|底)|(?:by |before )?(?:the )?end of (?:the |this )?month/iu;

/**
 * The deadline a goal names, read forward from when it was stated: "年底前…" → 31 Dec,
 * "月底" → end of month, "by December 15" / "下周五之前" → that day (end of day). Undefined when
 * the goal names no date.
 */
export function goalDeadline(text: string, statedAt: Date, timeZone: string): Date | undefined {
  const t = normaliseWidth(text);
  const stated = inZone(statedAt, timeZone);
  if (YEAR_END.test(t)) return stated.endOf('year').toJSDate();
  if (MONTH_END.test(t)) return stated.endOf('month').toJSDate();
  const ref = floatingReference(stated);
  // chrono's zh patterns backtrack on a digit then a whitespace run (12 minutes on 8000 chars,
  // issue #20) and on long numeral runs: it reads the goal with runs squeezed, at most a sentence.
  const read = cutAt(squeezeSpaces(t).text, MAX_SENTENCE_CHARS);
  const results = [...chrono.zh.parse(read, ref, { forwardDate: true }), ...chrono.en.parse(read, ref, { forwardDate: true })];
  const first = results[0];
  if (!first) return undefined;
  const c = first.start;
  const day = DateTime.fromObject({ year: c.get('year') ?? stated.year, month: c.get('month') ?? stated.month, day: c.get('day') ?? stated.day }, { zone: timeZone });
  return day.isValid ? day.endOf('day').toJSDate() : undefined;
}

/** All triggers that hold at `now`, most pressing first. */
export function findNudgeTriggers(input: { memories: readonly TriggerMemory[]; reminders: readonly TriggerReminder[]; now: Date; timeZone: string }): NudgeTrigger[] {
  const { now } = input;
  const out: NudgeTrigger[] = [];
  for (const r of input.reminders) {
    const minutes = Math.round((r.dueAt.getTime() - now.getTime()) / 60_000);
    if (minutes > 0 && minutes <= REMINDER_LOOKAHEAD_MINUTES) {
      out.push({ kind: 'reminder_upcoming', key: `reminder:${r.id}`, subject: r.text, reminderId: r.id, minutesLeft: minutes, priority: 300 - minutes / 10 });
    }
  }
  for (const m of input.memories) {
    if (m.type === 'goal') {
      const deadline = goalDeadline(m.text, m.createdAt, input.timeZone);
      if (!deadline) continue;
      const days = Math.ceil((deadline.getTime() - now.getTime()) / 86_400_000);
      if (days >= 0 && days <= GOAL_DEADLINE_DAYS) {
        out.push({ kind: 'goal_deadline', key: `goal:${m.id}`, subject: m.text, memoryId: m.id, daysLeft: days, priority: 200 - days });
      }
    } else if (m.type === 'pain_point') {
      const recent = now.getTime() - m.updatedAt.getTime() <= RECURRING_PAIN_WINDOW_DAYS * 86_400_000;
      if (m.frequencyCount >= RECURRING_PAIN_MIN_FREQUENCY && recent) {
        out.push({ kind: 'pain_point_recurring', key: `pain:${m.id}`, subject: m.text, memoryId: m.id, priority: 100 + Math.min(m.frequencyCount, 50) });
      }
    }
  }
  return out.sort((a, b) => b.priority - a.priority || a.key.localeCompare(b.key));
}
