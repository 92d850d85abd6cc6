import { continueAsNew, patched, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { createPersonaActivities } from '../../activities/persona/persona';
import { memoriesChangedSignal, personaWorkflowId, type RebuildPersonaInput } from '../../src/persona/contract';

type Activities = ReturnType<typeof createPersonaActivities>;
// The model step heartbeats; a template-only rebuild is two queries and one write.
const { rebuildPersona } = proxyActivities<Activities>({
  startToCloseTimeout: '3m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 },
});

// Embedding up to 300 memory texts on a shared machine; retried like the persona (an embedder outage passes).
const { rebuildScenes } = proxyActivities<Activities>({
  startToCloseTimeout: '3m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 },
});

/** Histories recorded before scene navigation rebuilt only the persona. */
export const SCENES_PATCH = 'scenes-in-persona-rebuild';

export { memoriesChangedSignal, personaWorkflowId };
export type { RebuildPersonaInput };

export interface RebuildPersonaResult {
  rebuilds: number;
  signals: number;
  last?: Awaited<ReturnType<Activities['rebuildPersona']>>;
  /** The last scene regrouping of the run (scene navigation, L2). */
  scenes?: Awaited<ReturnType<Activities['rebuildScenes']>>;
}

/** Rebuilds in one run before continuing as new (a user whose memories never stop changing). */
const MAX_REBUILDS_PER_RUN = 100;

/**
 * RebuildPersona: one per user (`persona:<userKey>`), started or signalled with signal-with-start
 * whenever the user's memories change. It waits `debounceSeconds`, so an extraction run's burst of
 * decisions is one rebuild, rebuilds the profile (idempotent: unchanged memories or text write
 * nothing), and goes round again only if more changes arrived meanwhile; then it ends, and the next
 * change starts a new run under the same id.
 */
export async function RebuildPersona(input: RebuildPersonaInput): Promise<RebuildPersonaResult> {
  let pending = true; // started by a change
  let signals = 0;
  setHandler(memoriesChangedSignal, () => {
    pending = true;
    signals++;
  });
  const result: RebuildPersonaResult = { rebuilds: 0, signals: 0 };
  while (pending) {
    if (input.debounceSeconds > 0) await sleep(`${input.debounceSeconds}s`);
    // Changes up to here are read by this rebuild; later ones go round again.
    pending = false;
    result.last = await rebuildPersona({ userKey: input.userKey });
    if (patched(SCENES_PATCH)) result.scenes = await rebuildScenes({ userKey: input.userKey });
    result.rebuilds++;
    if (pending && (result.rebuilds >= MAX_REBUILDS_PER_RUN || workflowInfo().continueAsNewSuggested)) {
      await continueAsNew<typeof RebuildPersona>(input);
    }
  }
  // A signal that arrives as the run completes fails that completion: the task runs again with the
  // signal (handlers run before the activity result resolves), so the loop above sees it.
  result.signals = signals;
  return result;
}
