import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { httpOk, startProcess, waitUntilReady, type ManagedProcess } from './managed-process';

export interface LocalChroma {
  url: string;
  process: ManagedProcess;
  /** HNSW indexes the server keeps loaded at once. */
  indexCache: number;
}

/** Open files a loaded HNSW index holds (its four files); the cache is sized by them. */
const FILES_PER_INDEX = 4;
/** Open files left for everything else (SQLite, sockets, the log). */
const FILES_MARGIN = 256;
/** Chroma's cache has 64 shards that each keep at least one index, so it never holds fewer. */
const MIN_INDEX_CACHE = 64;
/** The bench's measured capacity: 10k collections held about 1,050 open files and 0.9 GiB RSS with it. */
const MAX_INDEX_CACHE = 256;

/** This process's soft open-file limit, which the server inherits; 1,024 where it cannot be read. */
function openFileLimit(): number {
  try {
    const limits = readFileSync('/proc/self/limits', 'utf8');
    const soft = /Max open files\s+(\d+)/.exec(limits)?.[1];
    return soft ? Number(soft) : 1024;
  } catch {
    return 1024;
  }
}

/**
 * How many HNSW indexes the server may keep loaded. Chroma's default (65,536) keeps every
 * collection's index resident, 2.7 MiB and four open files each, so a server with a collection
 * per user runs out of files or memory at a few thousand users (docs/decisions.md). Bounded, an
 * evicted index is read back from disk on its next query; collections persist their index from
 * the first write (user-collections.ts), so there is always one to read.
 */
export function indexCacheFor(fileLimit: number): number {
  return Math.max(MIN_INDEX_CACHE, Math.min(MAX_INDEX_CACHE, Math.floor((fileLimit - FILES_MARGIN) / FILES_PER_INDEX)));
}

/**
 * Starts a Chroma server (`chroma run`, from the PyPI package) persisting under `dataDir`, from a
 * config file: `chroma run` takes the index cache's capacity only there, and flags or a file, not both.
 */
export async function startLocalChroma(opts: {
  chromaPath: string;
  dataDir: string;
  port: number;
  logFile: string;
  /** Loaded HNSW indexes; by default as many as the open-file limit leaves room for, at most 256. */
  indexCache?: number;
}): Promise<LocalChroma> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const indexCache = opts.indexCache ?? indexCacheFor(openFileLimit());
  const configFile = join(dataDir, 'chroma-run.yaml');
  writeFileSync(
    configFile,
    [
      `port: ${opts.port}`,
      'listen_address: "127.0.0.1"',
      `persist_path: ${JSON.stringify(dataDir)}`,
      'segment_manager:',
      '  hnsw_index_pool_cache_config:',
      '    memory:',
      `      capacity: ${indexCache}`,
      '',
    ].join('\n'),
  );
  const proc = startProcess('chroma', opts.chromaPath, ['run', configFile], opts.logFile, { env: { ...process.env, ANONYMIZED_TELEMETRY: 'False' } });
  const url = `http://127.0.0.1:${opts.port}`;
  await waitUntilReady(proc, 'Chroma', () => httpOk(`${url}/api/v2/heartbeat`), 90_000);
  return { url, process: proc, indexCache };
}
