import type { Client } from '@temporalio/client';
import type { ServiceSecrets } from '../security/secrets';
import type { SubjectKeys } from '../security/subject';
import type { ServiceDeps } from '../services/deps';

export interface ApiDeps extends Omit<ServiceDeps, 'extractor'> {
  temporal: Client;
  taskQueue: string;
  tenants: { tenantId: string; key: string }[];
  secrets: ServiceSecrets;
  subjects: SubjectKeys;
  idleSeconds: number;
  /** Extra health probes (e.g. the embedder) reported by /healthz. */
  probes: Record<string, () => Promise<void>>;
}
