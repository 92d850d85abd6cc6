import { Context } from '@temporalio/activity';
import { ErrorCode, MemoryServiceError } from '../../src/core/errors';
import type { MemoryPorts, PersonaPorts, ServiceDeps, SharedPorts } from '../../src/shared/deps';
import { rebuildPersona, type PersonaRebuildResult } from '../../src/persona/persona';
import { rebuildScenes, type SceneRebuildResult } from '../../src/persona/scenes';
import { withTypedFailures } from '../shared/failures';

/** The activity of RebuildPersona (workflows/persona/persona.ts): persona's slice and the memories it condenses. */
export function createPersonaActivities(deps: PersonaPorts & MemoryPorts & SharedPorts & Pick<ServiceDeps, 'config'>) {
  return withTypedFailures({
    async rebuildPersona(input: { userKey: string }): Promise<PersonaRebuildResult> {
      const personas = deps.personas;
      if (!personas) throw new MemoryServiceError(ErrorCode.internal, 'no persona store is configured');
      const ctx = Context.current();
      return rebuildPersona({ ...deps, personas }, { userId: input.userKey, heartbeat: () => ctx.heartbeat(), signal: ctx.cancellationSignal });
    },
    /** The scene index (L2), regrouped in the same run as the persona. */
    async rebuildScenes(input: { userKey: string }): Promise<SceneRebuildResult> {
      const scenes = deps.scenes;
      if (!scenes) throw new MemoryServiceError(ErrorCode.internal, 'no scene store is configured');
      return rebuildScenes({ ...deps, scenes }, { userId: input.userKey });
    },
  });
}
