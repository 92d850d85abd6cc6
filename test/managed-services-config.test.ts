import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, Secret, temporalConnectOptions, chromaHeaders } from '../src/config';
import { makeTestPki, type TestPki } from './support/tls';

// TEMPORAL_TLS*, TEMPORAL_API_KEY and CHROMA_AUTH_*/TENANT/DATABASE (src/config/connections.ts):
// what a managed Temporal or Chroma needs, refused at start when half given, never printed.
let pki: TestPki;
beforeAll(() => {
  pki = makeTestPki();
});
afterAll(() => pki?.remove());

const TEMPORAL = { TEMPORAL_ADDRESS: 'temporal.example.com:7233' };
const CHROMA = { CHROMA_URL: 'https://chroma.example.com' };
const API_KEY = 'tmprl-api-key-0123456789abcdef';
const CHROMA_TOKEN = 'ck-chroma-token-0123456789abcdef';

/** The variable and message a refused environment names. */
function refusal(env: Record<string, string>): { variable: string; message: string } | undefined {
  try {
    loadConfig(env);
    return undefined;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems[0];
  }
}

describe('Temporal connection settings', () => {
  it('connects plainly when nothing is set, as the local dev server wants', () => {
    const c = loadConfig({});
    expect(c.temporal.connection).toEqual({});
    expect(temporalConnectOptions(c.temporal.connection, '127.0.0.1:7233')).toEqual({ address: '127.0.0.1:7233', tls: false });
  });

  it('builds the SDK options of mTLS from the files: server CA, client pair, server name', () => {
    const c = loadConfig({ ...TEMPORAL, TEMPORAL_TLS_CA_PATH: pki.caPath, TEMPORAL_TLS_CERT_PATH: pki.clientCertPath, TEMPORAL_TLS_KEY_PATH: pki.clientKeyPath, TEMPORAL_TLS_SERVER_NAME: 'frontend.internal' });
    const options = temporalConnectOptions(c.temporal.connection, TEMPORAL.TEMPORAL_ADDRESS);
    expect(options).toEqual({
      address: TEMPORAL.TEMPORAL_ADDRESS,
      tls: { serverRootCACertificate: pki.pem(pki.caPath), clientCertPair: { crt: pki.pem(pki.clientCertPath), key: pki.pem(pki.clientKeyPath) }, serverNameOverride: 'frontend.internal' },
    });
  });

  it('takes an API key to mean TLS with the system roots (Temporal Cloud), unless TLS is turned off', () => {
    const cloud = loadConfig({ ...TEMPORAL, TEMPORAL_API_KEY: API_KEY });
    expect(temporalConnectOptions(cloud.temporal.connection, 'ns.acct.tmprl.cloud:7233')).toEqual({ address: 'ns.acct.tmprl.cloud:7233', tls: {}, apiKey: API_KEY });
    const sidecar = loadConfig({ ...TEMPORAL, TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS: 'off' });
    expect(temporalConnectOptions(sidecar.temporal.connection, 'localhost:7233')).toEqual({ address: 'localhost:7233', tls: false, apiKey: API_KEY });
    // TEMPORAL_TLS=on alone: TLS with the system roots; blank values are unset.
    expect(temporalConnectOptions(loadConfig({ ...TEMPORAL, TEMPORAL_TLS: 'ON', TEMPORAL_TLS_CA_PATH: ' ' }).temporal.connection, 'x:1').tls).toEqual({});
  });

  it('refuses half-given and contradictory settings, naming the variable to fix', () => {
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS_CERT_PATH: pki.clientCertPath })).toMatchObject({ variable: 'TEMPORAL_TLS_KEY_PATH', message: expect.stringMatching(/required with TEMPORAL_TLS_CERT_PATH/) });
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS_KEY_PATH: pki.clientKeyPath })).toMatchObject({ variable: 'TEMPORAL_TLS_CERT_PATH' });
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS: 'off', TEMPORAL_TLS_CA_PATH: pki.caPath })).toMatchObject({ variable: 'TEMPORAL_TLS_CA_PATH', message: expect.stringMatching(/TEMPORAL_TLS=off/) });
    // Without TEMPORAL_ADDRESS the local dev server is started, and it speaks plain gRPC.
    expect(refusal({ TEMPORAL_API_KEY: API_KEY })).toMatchObject({ variable: 'TEMPORAL_API_KEY', message: expect.stringMatching(/TEMPORAL_ADDRESS is unset/) });
    expect(refusal({ TEMPORAL_TLS: 'on' })).toMatchObject({ variable: 'TEMPORAL_TLS' });
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS: 'yes' })).toMatchObject({ variable: 'TEMPORAL_TLS' });
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS_SERVER_NAME: 'not a host/name' })).toMatchObject({ variable: 'TEMPORAL_TLS_SERVER_NAME' });
    expect(refusal({ ...TEMPORAL, TEMPORAL_API_KEY: `Bearer ${API_KEY}` })).toMatchObject({ variable: 'TEMPORAL_API_KEY', message: expect.stringMatching(/key alone/) });
  });

  it('refuses files it cannot read, files that are not what they are named for, and a key that is not the certificate’s', () => {
    const missing = join(pki.dir, 'nowhere.pem');
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS_CA_PATH: missing })).toEqual({ variable: 'TEMPORAL_TLS_CA_PATH', message: `cannot read "${missing}" (ENOENT)` });
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS_CA_PATH: pki.dir })).toMatchObject({ variable: 'TEMPORAL_TLS_CA_PATH', message: expect.stringMatching(/cannot read .*EISDIR/) });
    // The pair swapped: a key where the certificate goes, and the other way round.
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS_CERT_PATH: pki.clientKeyPath, TEMPORAL_TLS_KEY_PATH: pki.clientCertPath })).toMatchObject({ variable: 'TEMPORAL_TLS_CERT_PATH', message: expect.stringMatching(/not a PEM certificate/) });
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS_CERT_PATH: pki.clientCertPath, TEMPORAL_TLS_KEY_PATH: pki.clientCertPath })).toMatchObject({ variable: 'TEMPORAL_TLS_KEY_PATH', message: expect.stringMatching(/not an unencrypted PEM private key/) });
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS_CERT_PATH: pki.clientCertPath, TEMPORAL_TLS_KEY_PATH: pki.strangerKeyPath })).toMatchObject({ variable: 'TEMPORAL_TLS_KEY_PATH', message: expect.stringMatching(/not the private key of the certificate/) });
    const garbage = join(pki.dir, 'garbage.pem');
    writeFileSync(garbage, '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n');
    expect(refusal({ ...TEMPORAL, TEMPORAL_TLS_CA_PATH: garbage })).toMatchObject({ variable: 'TEMPORAL_TLS_CA_PATH', message: expect.stringMatching(/not a PEM certificate/) });
  });
});

describe('Chroma access settings', () => {
  it('sends the token as CHROMA_AUTH_HEADER says, Bearer in Authorization by default', () => {
    expect(loadConfig({}).chroma.access).toEqual({});
    expect(chromaHeaders(loadConfig({ ...CHROMA, CHROMA_AUTH_TOKEN: CHROMA_TOKEN }).chroma.access)).toEqual({ Authorization: `Bearer ${CHROMA_TOKEN}` });
    expect(chromaHeaders(loadConfig({ ...CHROMA, CHROMA_AUTH_TOKEN: CHROMA_TOKEN, CHROMA_AUTH_HEADER: 'x-chroma-token' }).chroma.access)).toEqual({ 'X-Chroma-Token': CHROMA_TOKEN });
    expect(loadConfig({ ...CHROMA, CHROMA_TENANT: 'acme-tenant', CHROMA_DATABASE: 'memory' }).chroma.access).toEqual({ tenant: 'acme-tenant', database: 'memory' });
  });

  it('refuses half-given settings and settings for a Chroma it starts itself', () => {
    expect(refusal({ ...CHROMA, CHROMA_AUTH_HEADER: 'X-Chroma-Token' })).toMatchObject({ variable: 'CHROMA_AUTH_TOKEN', message: expect.stringMatching(/required with CHROMA_AUTH_HEADER/) });
    expect(refusal({ CHROMA_AUTH_TOKEN: CHROMA_TOKEN })).toMatchObject({ variable: 'CHROMA_AUTH_TOKEN', message: expect.stringMatching(/CHROMA_URL is unset/) });
    expect(refusal({ CHROMA_DATABASE: 'memory' })).toMatchObject({ variable: 'CHROMA_DATABASE' });
    expect(refusal({ ...CHROMA, CHROMA_AUTH_TOKEN: CHROMA_TOKEN, CHROMA_AUTH_HEADER: 'Cookie' })).toMatchObject({ variable: 'CHROMA_AUTH_HEADER' });
    expect(refusal({ ...CHROMA, CHROMA_TENANT: 'a/../b' })).toMatchObject({ variable: 'CHROMA_TENANT' });
    expect(refusal({ ...CHROMA, CHROMA_AUTH_TOKEN: `Bearer ${CHROMA_TOKEN}` })).toMatchObject({ variable: 'CHROMA_AUTH_TOKEN' });
  });
});

describe('secrets', () => {
  const env = {
    ...TEMPORAL,
    ...CHROMA,
    TEMPORAL_API_KEY: API_KEY,
    TEMPORAL_TLS_CA_PATH: '',
    CHROMA_AUTH_TOKEN: CHROMA_TOKEN,
  };

  it('never show in a printed configuration, however it is printed', () => {
    const config = loadConfig({ ...env, TEMPORAL_TLS_CERT_PATH: pki.clientCertPath, TEMPORAL_TLS_KEY_PATH: pki.clientKeyPath });
    const key = pki.pem(pki.clientKeyPath).toString('utf8');
    const keyBody = key.split('\n')[1]!;
    for (const printed of [JSON.stringify(config), inspect(config, { depth: Infinity }), String(config.temporal.connection.apiKey), `${config.chroma.access.auth?.token}`]) {
      expect(printed).not.toContain(API_KEY);
      expect(printed).not.toContain(CHROMA_TOKEN);
      expect(printed).not.toContain(keyBody);
    }
    expect(inspect(config.temporal.connection, { depth: Infinity })).toContain('Secret([redacted])');
    expect(new Secret('x').reveal()).toBe('x');
  });

  it('never show in the errors of a refused configuration', () => {
    const messages = [
      { ...env, TEMPORAL_ADDRESS: '', TEMPORAL_API_KEY: API_KEY },
      { ...env, TEMPORAL_API_KEY: `${API_KEY} with a space` },
      { ...env, CHROMA_AUTH_TOKEN: `${CHROMA_TOKEN}\u0007` },
      { ...env, CHROMA_URL: '', CHROMA_AUTH_TOKEN: CHROMA_TOKEN },
      { ...env, TEMPORAL_TLS_CERT_PATH: pki.clientCertPath, TEMPORAL_TLS_KEY_PATH: pki.strangerKeyPath },
    ].map((e) => {
      try {
        loadConfig(e);
        return 'accepted';
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
    });
    for (const message of messages) {
      expect(message).toMatch(/^Invalid configuration/);
      expect(message).not.toContain(API_KEY);
      expect(message).not.toContain(CHROMA_TOKEN);
      expect(message).not.toContain(pki.pem(pki.strangerKeyPath).toString('utf8').split('\n')[1]!);
    }
  });
});
