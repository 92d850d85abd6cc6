import type { Client } from '@temporalio/client';
import type { AppConfig } from '../config';
import type { ServiceSecrets } from '../security/secrets';
import type { SubjectKeys } from '../security/subject';
import type { PayloadCodec } from '@temporalio/common';
import type { ServiceDeps } from '../shared/deps';
import type { HealthDeps } from '../shared/health';
import type { Queryable } from '../adapters/postgres/pool';
import type { ProactiveListenerDeps } from '../proactive/notifications';

/** Without the ports only the worker's jobs use: the retention sweep's message vector eraser. */
export interface ApiDeps extends Omit<ServiceDeps, 'extractor' | 'config' | 'quarantine' | 'messageVectorEraser'>, Pick<HealthDeps, 'pingPostgres'>, Pick<ProactiveListenerDeps, 'proactiveEvents'> {
  /** The extraction quarantine, always wired here: /healthz and /metrics count it. */
  quarantine: NonNullable<ServiceDeps['quarantine']>;
  /** Where the shared rate-limit counters live (rate_limit_counters), wired in runtime.ts. */
  rateLimitDb: Queryable;
  /** The services' settings, and the API's own: the page's sign-in, rate limits, the message batch body limit. */
  config: ServiceDeps['config'] & Pick<AppConfig, 'page' | 'rateLimits' | 'maxMessagesBodyBytes' | 'proxy' | 'exports' | 'eventStreams' | 'mcp'>;
  temporal: Client;
  /** The Temporal payload codec served to operators at /codec, with who may use it (undefined: encryption off). */
  codecServer?: { codec: PayloadCodec; authToken?: string; corsOrigins: string[] };
  taskQueue: string;
  tenants: { tenantId: string; key: string }[];
  subjects: SubjectKeys;
  idleSeconds: number;
  /** Extra health probes (e.g. the embedder) reported by /healthz. */
  probes: Record<string, () => Promise<void>>;
  /** Keys for signed values: the memory page's sign-in codes and session cookies. */
  secrets: ServiceSecrets;
}
