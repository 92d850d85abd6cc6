import { join, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { SEARCH_ATTRIBUTES } from '../../workflows/shared/search-attributes';
import { startProcess, waitUntilReady, type ManagedProcess } from './managed-process';
import { probes } from './readiness';

export interface LocalTemporal {
  address: string;
  uiUrl: string;
  process: ManagedProcess;
}


/**
 * Starts the Temporal CLI dev server (SQLite file, Web UI on) with the project's namespace and
 * search attributes registered at launch. Retention is set afterwards by `ensureNamespace`.
 */
export async function startLocalTemporal(opts: {
  cliPath: string;
  dataDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  logFile: string;
  /** Remote codec endpoint for the Web UI (the API's /codec), so an operator can read encrypted payloads. */
  uiCodecEndpoint?: string;
}): Promise<LocalTemporal> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--ui-port',
    String(opts.uiPort),
    '--db-filename',
    join(dataDir, 'temporal.sqlite'),
    '--namespace',
    opts.namespace,
    '--log-level',
    'warn',
    '--ui-disable-news-fetch',
    ...(opts.uiCodecEndpoint ? ['--ui-codec-endpoint', opts.uiCodecEndpoint] : []),
    ...Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
  ];
  const proc = startProcess('temporal', opts.cliPath, args, opts.logFile);
  // Ready when the frontend answers gRPC, not when its port opens (it binds before it serves).
  await waitUntilReady(proc, 'Temporal dev server', async () => (await probes.temporal(`127.0.0.1:${opts.port}`, 2000), true), 90_000);
  return { address: `127.0.0.1:${opts.port}`, uiUrl: `http://127.0.0.1:${opts.uiPort}`, process: proc };
}
