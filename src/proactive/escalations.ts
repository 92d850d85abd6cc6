/**
 * M.1's escalation, surfaced: the digest lists memories whose importance rose into the escalation
 * band, read from the audit trail (every write path records the score before and after), and
 * records each rise as surfaced with an `escalate` event keyed by the rise's own event, so a
 * retried or replayed digest, or a second digest of the same day, never surfaces it twice.
 */
import { ESCALATION_THRESHOLD } from '../core/lifecycle/importance';
import { ESCALATION_LOOKBACK_DAYS, escalationKey, escalationsFrom, type EscalatedMemory } from '../core/lifecycle/escalation';
import type { DigestSections } from '../core/proactive/digest-content';
import type { UserSettings } from '../core/proactive/settings';
import type { ServiceDeps } from '../shared/deps';

/** Audit rows read per digest; a day with more rises than this surfaces the earliest ones first. */
const MAX_RISES_READ = 200;

/** The escalated memories for the digest of `day`; none for a user who switched proactive messages off. */
export async function gatherEscalations(
  deps: Pick<ServiceDeps, 'proactiveMemories'>,
  input: { userId: string; settings: UserSettings; day: { date: string; start: Date; end: Date } },
): Promise<EscalatedMemory[]> {
  if (!input.settings.proactive.enabled) return [];
  const from = new Date(input.day.start.getTime() - ESCALATION_LOOKBACK_DAYS * 86_400_000);
  const rises = await deps.proactiveMemories.importanceRises({
    userId: input.userId,
    from,
    to: input.day.end,
    minScore: ESCALATION_THRESHOLD,
    digestDate: input.day.date,
    limit: MAX_RISES_READ,
  });
  return escalationsFrom(rises);
}

/** Records every listed rise as surfaced in the digest of `date` (idempotent per rise). */
export async function recordEscalations(
  deps: Pick<ServiceDeps, 'unitOfWork'>,
  input: { userId: string; date: string; escalated: NonNullable<DigestSections['escalatedMemories']>; at: Date; workflowId?: string; runId?: string },
): Promise<number> {
  if (input.escalated.length === 0) return 0;
  return deps.unitOfWork.forUser({
    userId: input.userId,
    work: async (tx) => {
      let recorded = 0;
      for (const m of input.escalated) {
        for (const cause of m.causeEventIds) {
          const appended = await tx.events.append({
            event: {
              userId: input.userId,
              memoryId: m.id,
              action: 'escalate',
              reason: `importance rose ${m.fromLevel} → ${m.toLevel} (${m.score.toFixed(2)}): surfaced in the digest of ${input.date}`,
              after: { digestDate: input.date, causeEventId: cause, fromLevel: m.fromLevel, toLevel: m.toLevel, importance: m.score },
              workflowId: input.workflowId,
              runId: input.runId,
              actor: 'digest',
              idempotencyKey: escalationKey(cause),
            },
            at: input.at,
          });
          if (appended) recorded++;
        }
      }
      return recorded;
    },
  });
}
