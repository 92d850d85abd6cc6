/**
 * Checklist M.3.5 ("recall_memories() 触发主动告知检查"): a recall that brings up an open goal or
 * pain point may lead to a proactive word about it. Pure: which recalled memories qualify and
 * which are still cooling down; whether to speak at all is the ordinary nudge decision
 * (`decideNudge`: opt-out, quiet hours, daily cap, the user's probability).
 */
import type { NudgeTrigger } from './nudge-triggers';

/** After a nudge about a memory (from a recall or the schedule), no recall-driven nudge about it for this long. */
export const RECALL_NUDGE_COOLDOWN_HOURS = 24;
/** Memory ids considered per batch of recalls: a recall returns a handful, this bounds a flood. */
export const RECALL_NUDGE_MAX_IDS = 50;

/**
 * The types a recall-driven nudge can be about. A memory's type never changes (a revision is a new
 * memory), so the recall that found it can leave the others out of the check: most recalls then
 * hand nothing to the nudge workflow at all.
 */
export function mayPromptRecallNudge(type: string): boolean {
  return type === 'goal' || type === 'pain_point';
}

/** A recalled memory as the decision needs it, read for the recalling user only. */
export interface RecalledMemory {
  id: string;
  text: string;
  type: string;
  status: string;
  /** Written by an agent and not yet confirmed by the user: not theirs to be reminded of yet. */
  pending: boolean;
  /** When the user last got a nudge about this memory, if ever. */
  lastNudgedAt?: Date;
}

/** True while a nudge about the memory at `last` still holds the next one back at `now`. */
export function coolingDown(last: Date | undefined, now: Date, hours = RECALL_NUDGE_COOLDOWN_HOURS): boolean {
  return last !== undefined && now.getTime() - last.getTime() < hours * 3_600_000;
}

/**
 * The recalled memories worth a nudge, most pressing first (pain points before goals, as the
 * seeds' injection order puts them), and the ids held back by the cool-down. Open means active
 * and confirmed: a resolved goal is superseded, an agent's unconfirmed note is pending.
 */
export function recallNudgeTriggers(input: { memories: readonly RecalledMemory[]; now: Date; cooldownHours?: number }): { triggers: NudgeTrigger[]; coolingDown: string[] } {
  const triggers: NudgeTrigger[] = [];
  const held: string[] = [];
  for (const m of input.memories) {
    if (m.status !== 'active' || m.pending || !mayPromptRecallNudge(m.type)) continue;
    if (coolingDown(m.lastNudgedAt, input.now, input.cooldownHours)) {
      held.push(m.id);
      continue;
    }
    // The keys are the scheduled triggers' keys: one subject is raised at most once a day by either path.
    if (m.type === 'pain_point') triggers.push({ kind: 'pain_point_recalled', key: `pain:${m.id}`, subject: m.text, memoryId: m.id, priority: 160 });
    else triggers.push({ kind: 'goal_recalled', key: `goal:${m.id}`, subject: m.text, memoryId: m.id, priority: 150 });
  }
  triggers.sort((a, b) => b.priority - a.priority || a.key.localeCompare(b.key));
  return { triggers, coolingDown: held };
}
