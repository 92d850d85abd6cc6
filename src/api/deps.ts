import type { Client } from '@temporalio/client';
import type { AppConfig } from '../config';
import type { ServiceDeps } from '../services/deps';

export interface ApiDeps extends Omit<ServiceDeps, 'extractor'> {
  /** The services' settings, and the API's own: rate limits and the message batch body limit. */
  config: ServiceDeps['config'] & Pick<AppConfig, 'rateLimits' | 'maxMessagesBodyBytes'>;
  temporal: Client;
  taskQueue: string;
  tenants: { tenantId: string; key: string }[];
  idleSeconds: number;
  /** Extra health probes (e.g. the embedder) reported by /healthz. */
  probes: Record<string, () => Promise<void>>;
}
