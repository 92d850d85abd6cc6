import { outboxHealth } from '../memory/outbox-drain';
import type { ServiceDeps } from '../shared/deps';
import type { HealthDeps } from '../shared/health';
import type { GaugeSources } from './metrics';

/** The outbox and quarantine gauges, read from PostgreSQL when Prometheus scrapes (the same reads as /healthz). */
export function gaugeSources(deps: Pick<ServiceDeps, 'outboxRetries'> & Pick<HealthDeps, 'quarantine'>): GaugeSources {
  return {
    outbox: () => outboxHealth(deps),
    quarantined: () => deps.quarantine.count(),
  };
}
