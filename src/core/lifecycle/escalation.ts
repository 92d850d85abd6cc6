/**
 * Checklist M.1's `should_escalate`, put to work: a memory whose importance level rose into the
 * escalation band (score ≥ ESCALATION_THRESHOLD, level above the one before) is surfaced in the
 * next daily digest, once per rise. Pure: the rises are read from the audit trail by the caller.
 */
import { importanceLevelFor, shouldEscalate } from './importance';
import type { EscalatedMemory, ImportanceChange } from '../ports/proactive';

export type { EscalatedMemory, ImportanceChange };

/** At most this many memories in the digest's section; the most important first. */
export const ESCALATED_DIGEST_LIMIT = 8;

/** Idempotency key of the `escalate` audit event that records a rise as surfaced. */
export function escalationKey(causeEventId: string): string {
  return `escalate:${causeEventId}`;
}

/**
 * The rises among `changes` that {@link shouldEscalate} accepts, one entry per memory (its lowest
 * level before and highest after across the rises), most important first. The level is always the
 * function of the score the write path stored (`importanceLevelFor`), so it is derived, not read.
 */
export function escalationsFrom(changes: readonly ImportanceChange[], limit = ESCALATED_DIGEST_LIMIT): EscalatedMemory[] {
  const byMemory = new Map<string, EscalatedMemory>();
  for (const c of [...changes].sort((a, b) => a.at.getTime() - b.at.getTime() || a.eventId.localeCompare(b.eventId))) {
    const from = importanceLevelFor(c.before);
    const to = importanceLevelFor(c.after);
    if (!shouldEscalate({ score: c.after, level: to }, from)) continue;
    const seen = byMemory.get(c.memoryId);
    if (!seen) {
      byMemory.set(c.memoryId, { id: c.memoryId, text: c.text, type: c.type, fromLevel: from, toLevel: to, score: c.after, causeEventIds: [c.eventId] });
      continue;
    }
    seen.causeEventIds.push(c.eventId);
    if (c.after > seen.score) Object.assign(seen, { toLevel: to, score: c.after });
  }
  return [...byMemory.values()].sort((a, b) => b.score - a.score || a.id.localeCompare(b.id)).slice(0, limit);
}

/**
 * Rises recorded this long before the digest's day still count: one that came after yesterday's
 * digest was written (22:00–24:00) is surfaced today instead of never.
 */
export const ESCALATION_LOOKBACK_DAYS = 2;
