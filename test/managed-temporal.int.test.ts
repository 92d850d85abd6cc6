import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../src/config';
import { startStack } from '../src/stack';
import { createTestContext } from './support/harness';
import { makeTestPki, startTlsTerminator, type TestPki, type TlsTerminator } from './support/tls';

// A Temporal that is reached over mTLS, as a cluster of one's own or Temporal Cloud is: the shared
// dev server behind a TLS terminator that asks every client for a certificate its CA signed. The
// terminator speaks only TLS, so anything that got through connected with the settings.
let pki: TestPki;
let terminator: TlsTerminator;

beforeAll(async () => {
  pki = makeTestPki();
  terminator = await startTlsTerminator(inject('stack').temporalAddress, pki, { requireClientCert: true, alpn: ['h2'] });
});

afterAll(async () => {
  await terminator?.close();
  pki?.remove();
});

/** TEMPORAL_* of a service behind the terminator; `pair` picks the client certificate (none, ours, a stranger's). */
function temporalEnv(pair: 'ours' | 'stranger' | 'none'): Record<string, string> {
  const certs: Record<string, string> = pair === 'ours' ? { TEMPORAL_TLS_CERT_PATH: pki.clientCertPath, TEMPORAL_TLS_KEY_PATH: pki.clientKeyPath } : pair === 'stranger' ? { TEMPORAL_TLS_CERT_PATH: pki.strangerCertPath, TEMPORAL_TLS_KEY_PATH: pki.strangerKeyPath } : {};
  // The server certificate names localhost: checked against that name, not the address's IP.
  return { TEMPORAL_ADDRESS: terminator.address, TEMPORAL_TLS_CA_PATH: pki.caPath, TEMPORAL_TLS_SERVER_NAME: 'localhost', ...certs };
}

/** The start of a process against the shared stack's other services: readiness checks and the namespace set-up. */
function startAgainst(env: Record<string, string>) {
  const stack = inject('stack');
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: stack.databaseUrl,
    CHROMA_URL: stack.chromaUrl,
    ...(stack.embeddingsUrl ? { EMBEDDINGS_URL: stack.embeddingsUrl } : {}),
    ...env,
  });
  return startStack(config, { ephemeral: true });
}

describe('Temporal over mTLS', () => {
  it('runs an extraction end to end through TLS: API, worker, schedules and health all connect with the certificates', async () => {
    const accepted = terminator.accepted;
    const ctx = await createTestContext(temporalEnv('ours'));
    try {
      expect(ctx.runtime.endpoints.temporalAddress).toBe(terminator.address);
      const user = `${ctx.prefix}-tls`;
      const posted = await ctx.call('POST', `/v1/users/${user}/conversations/c1/messages`, {
        messages: [
          { id: 'm1', role: 'user', content: '我对花生过敏，吃了会起疹子。' },
          { id: 'm2', role: 'assistant', content: '好的，我记住了。' },
        ],
      });
      expect(posted.status, JSON.stringify(posted.body)).toBeLessThan(300);
      const ended = await ctx.call('POST', `/v1/users/${user}/conversations/c1/end?wait=true`, {});
      expect(ended.status, JSON.stringify(ended.body)).toBe(200);
      const decisions = ended.body.result.decisions as { action: string; type: string }[];
      expect(decisions).toContainEqual(expect.objectContaining({ action: 'create' }));

      const recalled = await ctx.call('POST', `/v1/users/${user}/recall`, { query: '推荐个午餐' });
      expect(recalled.body.context.userPrefix).toContain('花生');

      await expect(ctx.runtime.ensureSchedules({ taskQueue: ctx.taskQueue })).resolves.toBeDefined();
      const health = await ctx.call('GET', '/healthz', undefined, { authorization: `Bearer ${ctx.runtime.config.codec.authToken}` });
      expect(health.body.checks.temporal).toMatchObject({ status: 'ok' });
      // The client's connection and the worker's each went through the terminator's handshake.
      expect(terminator.accepted - accepted).toBeGreaterThanOrEqual(2);
    } finally {
      await ctx.close();
    }
  });

  it('passes the start-up readiness check and the namespace set-up with the same certificates', async () => {
    const stack = await startAgainst(temporalEnv('ours'));
    expect(stack.temporalAddress).toBe(terminator.address);
    await stack.stop();
  });

  it('refuses to start without the client certificate, saying the server asks for one', async () => {
    const refused = terminator.rejected;
    // The readiness check stops at the TLS alert instead of waiting for a server that answered.
    await expect(startAgainst(temporalEnv('none'))).rejects.toThrow(
      /Temporal at 127\.0\.0\.1:\d+ over TLS \(server CA: TEMPORAL_TLS_CA_PATH; client certificate: none; server name localhost\) \(TEMPORAL_ADDRESS\) could not be used: TLS: tlsv13 alert certificate required \(the server asks for a client certificate: set TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH\)/,
    );
    // A runtime built without the readiness check (tests, an embedding process) says the same.
    await expect(createTestContext(temporalEnv('none'))).rejects.toThrow(
      /cannot connect to Temporal at 127\.0\.0\.1:\d+ \(TEMPORAL_ADDRESS\) over TLS \(server CA: TEMPORAL_TLS_CA_PATH; client certificate: none; server name localhost\): TLS: tlsv13 alert certificate required \(the server asks for a client certificate: set TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH\)/,
    );
    expect(terminator.rejected).toBeGreaterThan(refused);
  });

  it('refuses to start with a client certificate the server’s CA did not sign', async () => {
    await expect(startAgainst(temporalEnv('stranger'))).rejects.toThrow(/client certificate: TEMPORAL_TLS_CERT_PATH.*could not be used: TLS: the server closed the connection right after the handshake/);
  });

  it('refuses a server whose certificate the given CA did not sign, and one that does not carry the expected name', async () => {
    const ours = temporalEnv('ours');
    await expect(startAgainst({ ...ours, TEMPORAL_TLS_CA_PATH: '', TEMPORAL_TLS: 'on' })).rejects.toThrow(/server CA: system roots.*could not be used: TLS: self-signed certificate in certificate chain/);
    await expect(startAgainst({ ...ours, TEMPORAL_TLS_SERVER_NAME: 'temporal.example.com' })).rejects.toThrow(/could not be used: TLS: Hostname\/IP does not match certificate's altnames/);
  });
});
