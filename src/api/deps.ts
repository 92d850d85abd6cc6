import type { Client } from '@temporalio/client';
import type { AppConfig } from '../config';
import type { ServiceSecrets } from '../security/secrets';
import type { SubjectKeys } from '../security/subject';
import type { PayloadCodec } from '@temporalio/common';
import type { ServiceDeps } from '../shared/deps';

export interface ApiDeps extends Omit<ServiceDeps, 'extractor' | 'config'> {
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
