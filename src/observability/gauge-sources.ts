import type pg from 'pg';
import { PostgresMessageQuarantine } from '../adapters/postgres/message-quarantine';
import { outboxHealth } from '../memory/outbox-drain';
import type { ServiceDeps } from '../shared/deps';
import type { GaugeSources } from './metrics';

/** The outbox and quarantine gauges, read from PostgreSQL when Prometheus scrapes (the same reads as /healthz). */
export function gaugeSources(deps: Pick<ServiceDeps, 'outboxRetries'> & { pool: pg.Pool }): GaugeSources {
  return {
    outbox: () => outboxHealth(deps),
    quarantined: () => new PostgresMessageQuarantine(deps.pool).count(),
  };
}
