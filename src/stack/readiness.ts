import { createServer } from 'node:net';
import { Connection } from '@temporalio/client';
import pg from 'pg';

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

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200);

/**
 * Readiness is decided by the protocol, not by an open port: a port opens before the server can
 * answer (Temporal's frontend accepts TCP while its services start; Chroma's socket binds before
 * its heartbeat answers), and a port held by some other program opens too.
 */
export const probes = {
  async temporal(address: string, timeoutMs = 3000): Promise<void> {
    const connection = await Connection.connect({ address, connectTimeout: timeoutMs });
    try {
      await connection.workflowService.getSystemInfo({});
    } finally {
      await connection.close();
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

  async chroma(url: string, timeoutMs = 3000): Promise<void> {
    const res = await fetch(`${url.replace(/(?<!\/)\/+$/, '')}/api/v2/heartbeat`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) throw new Error(`heartbeat answered HTTP ${res.status}`);
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
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const source = what.variable ? ` (${what.variable})` : '';
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
