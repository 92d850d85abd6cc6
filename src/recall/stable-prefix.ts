/**
 * The stable part of the system prompt: the persona (L3) and the scene navigation block (L2), read
 * beside the routes and only for a full context (a request that restricts the routes gets neither).
 */
import { startPersona, type RecalledPersona } from './persona-recall';
import type { RecallDeps, RecallRequest, RecallResult } from './recall-request';
import { wantsStablePrefix } from './route-plan';
import type { RouteFailure } from './route-runner';
import { startScenes, type RecalledScenes } from './scenes-recall';

/** The two reads in flight; each is undefined when it does not apply. */
export interface StartedStablePrefix {
  persona?: ReturnType<typeof startPersona>;
  scenes?: ReturnType<typeof startScenes>;
}

export function startStablePrefix(deps: RecallDeps, req: RecallRequest): StartedStablePrefix {
  const wanted = wantsStablePrefix(deps, req);
  // Each is one keyed row, read with the short lists when the store offers it: the lists read both
  // exactly when this wants them (route-plan.ts).
  const lists = req.lists;
  const persona = !wanted.persona ? undefined : lists ? startPersona(deps, req.userId, req.now, req.deadline, () => lists.then((l) => l.persona)) : startPersona(deps, req.userId, req.now, req.deadline);
  const scenes = !wanted.scenes ? undefined : lists ? startScenes(deps, req.userId, req.deadline, () => lists.then((l) => l.scenes)) : startScenes(deps, req.userId, req.deadline);
  return { persona, scenes };
}

/** Awaits both reads; their route lines and failures join the request's. */
export async function settleStablePrefix(started: StartedStablePrefix, report: RecallResult['routes'], failures: RouteFailure[]): Promise<{ persona?: RecalledPersona; scenes?: RecalledScenes }> {
  const personaRead = started.persona ? await started.persona : undefined;
  if (personaRead) {
    report.push(...personaRead.report);
    failures.push(...personaRead.failures);
  }
  const scenesRead = started.scenes ? await started.scenes : undefined;
  if (scenesRead) {
    report.push(...scenesRead.report);
    failures.push(...scenesRead.failures);
  }
  return { persona: personaRead?.persona, scenes: scenesRead?.scenes };
}
