import type { Client } from '@temporalio/client';
import type { AppConfig } from '../config';
import type { ServiceSecrets } from '../security/secrets';
import type { SubjectKeys } from '../security/subject';
import type { ServiceDeps } from '../services/deps';

export interface ApiDeps extends Omit<ServiceDeps, 'extractor' | 'config'> {
  config: ServiceDeps['config'] & Pick<AppConfig, 'page'>;
  temporal: Client;
  taskQueue: string;
  tenants: { tenantId: string; key: string }[];
  subjects: SubjectKeys;
  idleSeconds: number;
  /** Extra health probes (e.g. the embedder) reported by /healthz. */
  probes: Record<string, () => Promise<void>>;
  /** Keys for signed values: the memory page's sign-in codes and session cookies. */
  secrets: ServiceSecrets;
}
