import type { Client } from '@temporalio/client';
import type { ServiceDeps } from '../services/deps';

export interface ApiDeps extends Omit<ServiceDeps, 'extractor'> {
  temporal: Client;
  taskQueue: string;
  tenants: { tenantId: string; key: string }[];
  idleSeconds: number;
  /** Extra health probes (e.g. the embedder) reported by /healthz. */
  probes: Record<string, () => Promise<void>>;
}
