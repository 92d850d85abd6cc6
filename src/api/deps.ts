import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { ServiceDeps } from '../services/deps';

export interface ApiDeps extends Omit<ServiceDeps, 'extractor'> {
  temporal: Client;
  /** The Temporal payload codec served to operators at /codec, with who may use it (undefined: encryption off). */
  codecServer?: { codec: PayloadCodec; authToken?: string; corsOrigins: string[] };
  taskQueue: string;
  tenants: { tenantId: string; key: string }[];
  idleSeconds: number;
  /** Extra health probes (e.g. the embedder) reported by /healthz. */
  probes: Record<string, () => Promise<void>>;
}
