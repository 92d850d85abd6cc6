import type { Client } from '@temporalio/client';
import type { ServiceDeps } from './deps';
import { outboxHealth, type OutboxHealth } from '../memory/outbox-drain';

export type DependencyStatus = 'ok' | 'degraded' | 'down';

export interface DependencyCheck {
  status: DependencyStatus;
  latencyMs: number;
  error?: string;
  /** The vector outbox only: entries waiting for Chroma, dead letters, oldest wait. */
  pending?: number;
  deadLetters?: number;
  oldestPendingSeconds?: number | null;
  /** The extraction quarantine only: messages held out of extraction (docs/write-path.md#quarantine). */
  quarantined?: number;
}

export interface HealthDeps extends Pick<ServiceDeps, 'vectors' | 'outboxRetries'> {
  temporal: Client;
  /** The extraction quarantine, for its count over every user. */
  quarantine: Pick<NonNullable<ServiceDeps['quarantine']>, 'count'>;
  /** Resolves when PostgreSQL answers (wired in runtime.ts over the one pool). */
  pingPostgres: () => Promise<unknown>;
  /** Extra probes (e.g. the embedder). */
  probes: Record<string, () => Promise<void>>;
}

/** A probe that never throws and never hangs: a dependency that does not answer in time is down. */
async function probe(fn: () => Promise<unknown>, timeoutMs: number): Promise<DependencyCheck> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([fn(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)))]);
    return { status: 'ok', latencyMs: Math.round(performance.now() - t0) };
  } catch (err) {
    return { status: 'down', latencyMs: Math.round(performance.now() - t0), error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

/** The vector outbox is degraded while dead letters exist: they need an operator (docs/reliability.md). */
async function outboxCheck(deps: HealthDeps, timeoutMs: number): Promise<DependencyCheck> {
  let health: OutboxHealth | undefined;
  const probed = await probe(async () => {
    health = await outboxHealth(deps);
  }, timeoutMs);
  if (!health) return probed;
  return { ...probed, status: health.deadLetters > 0 ? 'degraded' : 'ok', ...health };
}

/**
 * Messages quarantined by extraction, over every user: a count for the operator (and a future
 * /metrics), not a failure — the service works; each one is read and released by hand.
 */
async function quarantineCheck(deps: HealthDeps, timeoutMs: number): Promise<DependencyCheck> {
  let quarantined: number | undefined;
  const probed = await probe(async () => {
    quarantined = await deps.quarantine.count();
  }, timeoutMs);
  return quarantined === undefined ? probed : { ...probed, quarantined };
}

/**
 * The Temporal probe under a gRPC deadline. The client retries an unavailable server with backoff
 * for far longer than a probe waits; without the deadline every probe of a down Temporal left a
 * call retrying in the background after its answer, and a retry firing after the connection was
 * closed at shutdown threw from a timer ("Channel has been shut down").
 */
function temporalSystemInfo(temporal: Client, timeoutMs: number): Promise<unknown> {
  return temporal.connection.withDeadline(Date.now() + timeoutMs, () => temporal.connection.workflowService.getSystemInfo({}));
}

/** How long a probe waits for each dependency, and the deadline of the Temporal call. */
export const HEALTH_PROBE_TIMEOUT_MS = 3000;

/** Every dependency's status and latency, probed in parallel. */
export async function checkDependencies(deps: HealthDeps, timeoutMs = HEALTH_PROBE_TIMEOUT_MS): Promise<Record<string, DependencyCheck>> {
  const entries = await Promise.all(
    [
      ['outbox', outboxCheck(deps, timeoutMs)] as const,
      ['extractionQuarantine', quarantineCheck(deps, timeoutMs)] as const,
      ['temporal', probe(() => temporalSystemInfo(deps.temporal, timeoutMs), timeoutMs)] as const,
      ['postgres', probe(() => deps.pingPostgres(), timeoutMs)] as const,
      ['chroma', probe(() => deps.vectors.heartbeat(), timeoutMs)] as const,
      ...Object.entries(deps.probes).map(([name, fn]) => [name, probe(fn, timeoutMs)] as const),
    ].map(async ([name, p]) => [name, await p] as const),
  );
  return Object.fromEntries(entries);
}
