import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { migrate } from '../src/adapters/postgres/migrate';
import { KEY_LISTENER_APPLICATION_NAME } from '../src/adapters/postgres/payload-key-listener';
import { loadConfig } from '../src/config';
import { createRuntime, type Runtime } from '../src/runtime';
import { ensureDatabase } from '../src/stack/local-postgres';
import { probes } from '../src/stack/readiness';
import { poll } from './support/poll';
import { makeTestPki, startTlsTerminator, type TestPki, type TlsTerminator } from './support/tls';

// A managed PostgreSQL reached over TLS with a client certificate, configured by DATABASE_URL alone:
// the shared server behind a TLS terminator, reached with PostgreSQL 17's direct TLS negotiation
// (`sslnegotiation=direct`: TLS from the first byte, so a plain TLS terminator can stand in for a
// server's own TLS). The terminator speaks only TLS and wants a client certificate, so every
// connection that worked — migrations, the pool, the LISTEN of key destructions, the readiness
// probe — took the URL's TLS settings as given.
let pki: TestPki;
let terminator: TlsTerminator;
let tlsUrl: URL;

beforeAll(async () => {
  pki = makeTestPki();
  const plain = new URL(inject('stack').databaseUrl);
  terminator = await startTlsTerminator(`${plain.hostname}:${plain.port}`, pki, { requireClientCert: true, alpn: ['postgresql'] });
  const db = `test_tls_${randomBytes(3).toString('hex')}`;
  const admin = new URL(plain);
  admin.pathname = '/postgres';
  await ensureDatabase(admin.toString(), db);
  tlsUrl = new URL(plain);
  tlsUrl.host = terminator.address;
  tlsUrl.pathname = `/${db}`;
  for (const [name, value] of Object.entries({ sslmode: 'verify-full', sslnegotiation: 'direct', sslrootcert: pki.caPath, sslcert: pki.clientCertPath, sslkey: pki.clientKeyPath })) tlsUrl.searchParams.set(name, value);
});

afterAll(async () => {
  await terminator?.close();
  pki?.remove();
});

describe('PostgreSQL over TLS through DATABASE_URL alone', () => {
  let runtime: Runtime | undefined;
  afterAll(async () => {
    await runtime?.close();
  });

  it('migrates, serves and listens with the URL’s sslmode, sslrootcert, sslcert and sslkey', async () => {
    const stack = inject('stack');
    await expect(probes.postgres(tlsUrl.toString())).resolves.toBeUndefined();
    const accepted = terminator.accepted;
    const config = loadConfig({ ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: tlsUrl.toString() });
    runtime = await createRuntime(config, { ...stack, databaseUrl: tlsUrl.toString(), dataDir: '' }, { migrate: true });
    const api = await runtime.createApi();
    try {
      const health = await api.inject({ method: 'GET', url: '/healthz', headers: { authorization: `Bearer ${config.codec.authToken}` } });
      expect(health.json().checks.postgres).toMatchObject({ status: 'ok' });
      const { rows } = await runtime.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pgmigrations');
      expect(rows[0]!.n).toBeGreaterThan(0);
      // The payload keys' LISTEN holds a connection of its own, through the terminator too.
      const pool = runtime.pool;
      const listeners = await poll(
        async () => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [KEY_LISTENER_APPLICATION_NAME])).rows[0]!.n,
        (n) => n >= 1,
      );
      expect(listeners).toBeGreaterThanOrEqual(1);
    } finally {
      await api.close();
    }
    // Migrations, the pool and the listener: at least three connections, each a TLS handshake.
    expect(terminator.accepted - accepted).toBeGreaterThanOrEqual(3);
  });

  it('fails to connect when the URL leaves out the client certificate the server asks for', async () => {
    const withoutCert = new URL(tlsUrl);
    withoutCert.searchParams.delete('sslcert');
    withoutCert.searchParams.delete('sslkey');
    await expect(migrate(withoutCert.toString())).rejects.toThrow(/certificate required/);
  });
});
