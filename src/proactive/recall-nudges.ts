/**
 * M.3: what a batch of recalls could lead to saying. The recall path only hands over memory ids
 * (a fire-and-forget signal, src/proactive/recall-nudge-signal.ts); this reads them back for the
 * recalling user alone, so an id of another user's memory finds nothing.
 */
import { DateTime } from 'luxon';
import { RECALL_NUDGE_MAX_IDS, recallNudgeTriggers } from '../core/proactive/recall-nudge';
import type { NudgeTrigger } from '../core/proactive/nudge-triggers';
import type { UserSettings } from '../core/proactive/settings';
import type { ServiceDeps } from '../shared/deps';
import { userSettings } from '../account/settings';

// Memory ids are uuids; anything else would only make the query's cast fail.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;

export interface RecallNudgeContext {
  settings: UserSettings;
  sentToday: number;
  triggers: NudgeTrigger[];
  /** Recalled goals and pain points held back because the user heard about them recently. */
  coolingDown: string[];
}

/** Settings, today's nudge count and the recall triggers among `memoryIds`; nothing is read past an opt-out. */
export async function loadRecallNudgeContext(
  deps: Pick<ServiceDeps, 'settings' | 'notifications' | 'proactiveMemories' | 'config'>,
  input: { userId: string; memoryIds: readonly string[]; at: Date; cooldownHours?: number },
): Promise<RecallNudgeContext> {
  const { userId, at } = input;
  const settings = await userSettings(deps, userId);
  if (!settings.proactive.enabled) return { settings, sentToday: 0, triggers: [], coolingDown: [] };
  const ids = [...new Set(input.memoryIds.filter((id) => UUID.test(id)))].slice(0, RECALL_NUDGE_MAX_IDS);
  const memories = await deps.proactiveMemories.goalsAndPainPointsAmong({ userId, ids });
  if (memories.length === 0) return { settings, sentToday: 0, triggers: [], coolingDown: [] };
  const since = DateTime.fromJSDate(at, { zone: settings.timezone }).startOf('day').toJSDate();
  const [sentToday, lastNudged] = await Promise.all([
    deps.notifications.countSince({ userId, kind: 'nudge', since }),
    deps.notifications.lastNudgedAbout({ userId, memoryIds: memories.map((m) => m.id) }),
  ]);
  const { triggers, coolingDown } = recallNudgeTriggers({
    memories: memories.map((m) => ({ ...m, lastNudgedAt: lastNudged.get(m.id) })),
    now: at,
    cooldownHours: input.cooldownHours,
  });
  return { settings, sentToday, triggers, coolingDown };
}
