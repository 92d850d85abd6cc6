import { join, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { createConnection } from 'node:net';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { startProcess, waitUntilReady, type ManagedProcess } from './managed-process';

export interface LocalTemporal {
  address: string;
  uiUrl: string;
  process: ManagedProcess;
}

function tcpOpen(host: string, port: number): Promise<boolean> {
  return new Promise((res) => {
    const socket = createConnection({ host, port }, () => {
      socket.end();
      res(true);
    });
    socket.once('error', () => res(false));
  });
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
  await waitUntilReady(proc, 'Temporal dev server', () => tcpOpen('127.0.0.1', opts.port), 90_000);
  return { address: `127.0.0.1:${opts.port}`, uiUrl: `http://127.0.0.1:${opts.uiPort}`, process: proc };
}
