import { createServer } from 'node:net';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import { chromaAnswers, chromaClient, chromaFailureReason, isChromaAuthFailure } from '../adapters/chroma/user-collections';
import { temporalConnectOptions, type ChromaAccess, type TemporalConnectionSettings } from '../config';
import { tlsDiagnosis, tlsHint } from './temporal-tls';

/**
 * A dependency the service needs did not answer, or could not be started. The message names the
 * dependency and the variable that points at it, so `npm run dev` can print one clear line instead
 * of a gRPC or socket stack trace.
 */
export class StackStartError extends Error {
  constructor(
    message: string,
    readonly dependency: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StackStartError';
  }
}

/**
 * A dependency answered, and refused us: a credential, a certificate, a server name. Waiting
 * changes nothing, so readiness stops at once with this message instead of retrying to its deadline.
 */
export class DependencyRefused extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DependencyRefused';
  }
}

/** gRPC UNAUTHENTICATED and PERMISSION_DENIED: Temporal refused the API key or the client certificate's identity. */
const GRPC_REFUSALS: Record<number, string> = { 16: 'UNAUTHENTICATED', 7: 'PERMISSION_DENIED' };

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200);

/**
 * Readiness is decided by the protocol, not by an open port: a port opens before the server can
 * answer (Temporal's frontend accepts TCP while its services start; Chroma's socket binds before
 * its heartbeat answers), and a port held by some other program opens too.
 */
export const probes = {
  /** `settings`: TLS, mTLS and API key of a Temporal the configuration names (none for the local dev server). */
  async temporal(address: string, timeoutMs = 3000, settings: TemporalConnectionSettings = {}): Promise<void> {
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ ...temporalConnectOptions(settings, address), connectTimeout: timeoutMs });
      await connection.workflowService.getSystemInfo({});
    } catch (err) {
      const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
      if (typeof code === 'number' && GRPC_REFUSALS[code]) {
        throw new DependencyRefused(`${GRPC_REFUSALS[code]}: ${reason(err)}${settings.apiKey ? ' (check TEMPORAL_API_KEY and TEMPORAL_NAMESPACE)' : ''}`, { cause: err });
      }
      const finding = await tlsDiagnosis(settings, address).catch(() => undefined);
      if (finding) throw new DependencyRefused(`${finding}${tlsHint(settings, finding)}`, { cause: err });
      throw err;
    } finally {
      await connection?.close();
    }
  },

  async postgres(url: string, timeoutMs = 3000): Promise<void> {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
    await client.connect();
    try {
      await client.query('SELECT 1');
    } finally {
      await client.end();
    }
  },

  /**
   * Through the service's own Chroma client, with its token, tenant and database (`access`): an
   * authenticated call, since Chroma (and a proxy in front of it) answers its heartbeat to anyone.
   */
  async chroma(url: string, timeoutMs = 3000, access: ChromaAccess = {}): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([chromaAnswers(chromaClient(url, access)), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)))]);
    } catch (err) {
      if (isChromaAuthFailure(err)) throw new DependencyRefused(chromaFailureReason(err), { cause: err });
      throw err;
    } finally {
      clearTimeout(timer);
    }
  },

  /** An OpenAI-compatible embeddings endpoint (…/v1): one tiny embedding proves the model loaded. */
  async embeddings(baseUrl: string, model: string, apiKey: string, timeoutMs = 10_000): Promise<void> {
    const res = await fetch(`${baseUrl.replace(/(?<!\/)\/+$/, '')}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ model, input: ['ready'] }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new Error(`embeddings answered HTTP ${res.status}`);
  },
};

/** Runs `probe` until it succeeds or `deadlineMs` passes; then fails naming the dependency. */
export async function expectReady(what: { dependency: string; where: string; variable?: string }, probe: () => Promise<void>, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  let last: unknown;
  for (;;) {
    try {
      await probe();
      return;
    } catch (err) {
      last = err;
    }
    if (last instanceof DependencyRefused || Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const source = what.variable ? ` (${what.variable})` : '';
  if (last instanceof DependencyRefused) throw new StackStartError(`${what.dependency} at ${what.where}${source} could not be used: ${last.message}`, what.dependency, { cause: last });
  throw new StackStartError(`${what.dependency} at ${what.where}${source} did not answer within ${Math.round(deadlineMs / 1000)} s: ${reason(last)}`, what.dependency, { cause: last });
}

/** Fails with the variable to change when a fixed port the stack needs is already taken. */
export async function expectPortFree(port: number, what: { dependency: string; variable: string }): Promise<void> {
  const free = await new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
  if (!free) {
    throw new StackStartError(
      `port ${port} for the local ${what.dependency} is already in use: stop what holds it, or set ${what.variable} to another port (or point the service at a running ${what.dependency})`,
      what.dependency,
    );
  }
}
