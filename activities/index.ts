import type { ServiceDeps } from '../src/shared/deps';
import { createEpisodeActivities } from './conversation/episodes';
import { createExtractionActivities } from './conversation/extraction';
import { createExtractionRunActivities } from './conversation/extraction-runs';
import { withTypedFailures } from './shared/failures';
import { createLifecycleActivities } from './lifecycle/lifecycle';
import { createMemoryActivities } from './memory/memory';
import { createProactiveActivities } from './proactive/proactive';

export { candidateKey } from '../src/conversation/extraction';

/**
 * Activity implementations, built from injected dependencies so tests can pass real or fake ones.
 * Names read as what they do in Temporal UI's event history. Every factory's activities go
 * through the failure boundary (./failures.ts). Workflows type the factories of the capabilities
 * they call, never this one (.dependency-cruiser.cjs).
 */
export function createActivities(deps: ServiceDeps) {
  return {
    ...createLifecycleActivities(deps),
    ...createProactiveActivities(deps),
    ...createEpisodeActivities(deps),
    ...withTypedFailures(createExtractionRunActivities(deps)),
    ...createExtractionActivities(deps),
    ...createMemoryActivities(deps),
  };
}
