import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { httpOk, startProcess, waitUntilReady, type ManagedProcess } from './managed-process';

export interface LocalChroma {
  url: string;
  process: ManagedProcess;
}

/** Starts a Chroma server (`chroma run`, from the PyPI package) persisting under `dataDir`. */
export async function startLocalChroma(opts: {
  chromaPath: string;
  dataDir: string;
  port: number;
  logFile: string;
}): Promise<LocalChroma> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const proc = startProcess(
    'chroma',
    opts.chromaPath,
    ['run', '--path', dataDir, '--host', '127.0.0.1', '--port', String(opts.port)],
    opts.logFile,
    { env: { ...process.env, ANONYMIZED_TELEMETRY: 'False' } },
  );
  const url = `http://127.0.0.1:${opts.port}`;
  await waitUntilReady(proc, 'Chroma', () => httpOk(`${url}/api/v2/heartbeat`), 90_000);
  return { url, process: proc };
}
