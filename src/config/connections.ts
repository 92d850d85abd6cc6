/**
 * How the service reaches a Temporal or a Chroma it does not start itself: TLS, mTLS and an API key
 * for Temporal (a cluster of one's own, Temporal Cloud), a token, a tenant and a database for
 * Chroma (Chroma Cloud, a Chroma behind a reverse proxy that wants a token). Parsed with the rest of
 * the environment (index.ts). The files are read here, once, at start: a file that is missing, not
 * what its variable names, or a key that is not its certificate's stops the service naming the
 * variable, instead of a handshake failing later with a transport error.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import type { ConnectionOptions, TLSConfig } from '@temporalio/client';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { z } from 'zod';
import { blankToUndefined, fail, optionalString } from './values';

/**
 * A value that must never reach a log, an error or a printed configuration: printed in any way
 * (`String`, JSON, `util.inspect`, a test runner's diff) it reads `[redacted]`; `reveal()` is the one
 * way to the value, called where it goes out to its server.
 */
export class Secret<T> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  reveal(): T {
    return this.#value;
  }

  toString(): string {
    return '[redacted]';
  }

  toJSON(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return 'Secret([redacted])';
  }
}

const onOff = z.preprocess((v) => (typeof blankToUndefined(v) === 'string' ? String(v).trim().toLowerCase() : undefined), z.enum(['on', 'off']).optional());
/** A TLS server name: what the certificate names, which may differ from the address dialled. */
const serverName = z.preprocess(blankToUndefined, z.string().trim().regex(/^[\w.-]{1,253}$/, 'expected a host name such as temporal.example.com').optional());
/** Chroma tenant and database names go into its URL paths. */
const chromaName = z.preprocess(blankToUndefined, z.string().trim().regex(/^[\w.-]{1,128}$/, 'expected letters, digits, ".", "_" or "-"').optional());
const CHROMA_AUTH_HEADERS = ['Authorization', 'X-Chroma-Token'] as const;
const chromaAuthHeader = z.preprocess(
  (v) => {
    const raw = blankToUndefined(v);
    if (typeof raw !== 'string') return raw;
    // Header names are case-insensitive: any spelling of the two names is the name.
    return CHROMA_AUTH_HEADERS.find((h) => h.toLowerCase() === raw.trim().toLowerCase()) ?? raw.trim();
  },
  z.enum(CHROMA_AUTH_HEADERS).optional(),
);

/** The variables, spread into the environment schema (index.ts) next to TEMPORAL_ADDRESS and CHROMA_URL. */
export const temporalConnectionEnv = {
  TEMPORAL_TLS: onOff,
  TEMPORAL_TLS_CA_PATH: optionalString,
  TEMPORAL_TLS_CERT_PATH: optionalString,
  TEMPORAL_TLS_KEY_PATH: optionalString,
  TEMPORAL_TLS_SERVER_NAME: serverName,
  TEMPORAL_API_KEY: optionalString,
};
export const chromaAccessEnv = {
  CHROMA_AUTH_TOKEN: optionalString,
  CHROMA_AUTH_HEADER: chromaAuthHeader,
  CHROMA_TENANT: chromaName,
  CHROMA_DATABASE: chromaName,
};

type TemporalEnv = { TEMPORAL_ADDRESS?: string } & { [K in keyof typeof temporalConnectionEnv]?: z.infer<(typeof temporalConnectionEnv)[K]> };
type ChromaEnv = { CHROMA_URL?: string } & { [K in keyof typeof chromaAccessEnv]?: z.infer<(typeof chromaAccessEnv)[K]> };

/** TLS towards Temporal; absent: plain gRPC (the local dev server). Option names as the SDK's TLSConfig. */
export interface TemporalTlsSettings {
  /** PEM of the CA that signed the server's certificate; absent: the system's roots (Temporal Cloud). */
  serverRootCACertificate?: Buffer;
  /** mTLS: this service's certificate and its private key (PEM). */
  clientCertPair?: { crt: Buffer; key: Secret<Buffer> };
  /** The name the server's certificate is checked against (and sent as SNI), when not the address's host. */
  serverNameOverride?: string;
}

export interface TemporalConnectionSettings {
  tls?: TemporalTlsSettings;
  /** Sent as `Authorization: Bearer …` on every call (Temporal Cloud API keys). */
  apiKey?: Secret<string>;
}

/** Credentials and scope at a Chroma of one's own choosing; every field absent: the local Chroma, as it is. */
export interface ChromaAccess {
  /** `Authorization: Bearer <token>` or `X-Chroma-Token: <token>` on every request. */
  auth?: { header: (typeof CHROMA_AUTH_HEADERS)[number]; token: Secret<string> };
  /** Absent: Chroma's `default_tenant` and `default_database`. */
  tenant?: string;
  database?: string;
}

/** Characters an HTTP header value can carry; a token with others would fail every request. */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

const ioCode = (err: unknown) => (typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : 'unreadable');

function readFileOf(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    return fail(variable, `cannot read "${path}" (${ioCode(err)})`);
  }
}

/** A PEM certificate (or a bundle of them: the first is checked). */
function certificate(variable: string, path: string): { pem: Buffer; first: X509Certificate } {
  const pem = readFileOf(variable, path);
  let first: X509Certificate | undefined;
  try {
    if (pem.includes('-----BEGIN CERTIFICATE-----')) first = new X509Certificate(pem);
  } catch {
    first = undefined;
  }
  if (!first) fail(variable, `"${path}" is not a PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return { pem, first };
}

/** An unencrypted PEM private key. The error never quotes the file: it may be the key. */
function privateKey(variable: string, path: string): { pem: Buffer; key: ReturnType<typeof createPrivateKey> } {
  const pem = readFileOf(variable, path);
  try {
    if (pem.includes('PRIVATE KEY-----')) return { pem, key: createPrivateKey(pem) };
  } catch {
    // Reported below with the file's name: an encrypted key or another kind of file.
  }
  return fail(variable, `"${path}" is not an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)`);
}

/**
 * TEMPORAL_TLS* and TEMPORAL_API_KEY. TLS is on when TEMPORAL_TLS=on or when any of them is set,
 * unless TEMPORAL_TLS=off (which only an API key may be combined with: a plaintext sidecar or
 * proxy on a private network). They apply to the server TEMPORAL_ADDRESS names: the local dev
 * server `npm run dev` starts speaks plain gRPC, so without an address they are a mistake.
 */
export function temporalConnectionSettings(e: TemporalEnv): TemporalConnectionSettings {
  const tlsParts = (['TEMPORAL_TLS_CA_PATH', 'TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH', 'TEMPORAL_TLS_SERVER_NAME'] as const).filter((v) => e[v] !== undefined);
  const given = [...(e.TEMPORAL_TLS === 'on' ? ['TEMPORAL_TLS'] : []), ...tlsParts, ...(e.TEMPORAL_API_KEY !== undefined ? ['TEMPORAL_API_KEY'] : [])];
  if (given.length > 0 && !e.TEMPORAL_ADDRESS) fail(given[0]!, 'applies to the Temporal server TEMPORAL_ADDRESS names, and TEMPORAL_ADDRESS is unset (the local dev server speaks plain gRPC): set TEMPORAL_ADDRESS or remove it');
  if (e.TEMPORAL_TLS === 'off' && tlsParts.length > 0) fail(tlsParts[0]!, 'needs TLS, and TEMPORAL_TLS=off: remove one of the two');
  if (e.TEMPORAL_TLS_CERT_PATH && !e.TEMPORAL_TLS_KEY_PATH) fail('TEMPORAL_TLS_KEY_PATH', 'required with TEMPORAL_TLS_CERT_PATH: the private key of the client certificate (mTLS)');
  if (e.TEMPORAL_TLS_KEY_PATH && !e.TEMPORAL_TLS_CERT_PATH) fail('TEMPORAL_TLS_CERT_PATH', 'required with TEMPORAL_TLS_KEY_PATH: the client certificate the key belongs to (mTLS)');
  const key = e.TEMPORAL_API_KEY;
  if (key !== undefined && /^bearer\s/i.test(key)) fail('TEMPORAL_API_KEY', 'give the key alone: "Bearer " is added when it is sent');
  if (key !== undefined && !HEADER_SAFE.test(key)) fail('TEMPORAL_API_KEY', 'contains spaces or characters a request header cannot carry');
  const apiKey = key === undefined ? undefined : new Secret(key);

  const tlsOn = e.TEMPORAL_TLS === 'on' || (e.TEMPORAL_TLS !== 'off' && given.length > 0);
  if (!tlsOn) return apiKey ? { apiKey } : {};
  const tls: TemporalTlsSettings = {};
  if (e.TEMPORAL_TLS_CA_PATH) tls.serverRootCACertificate = certificate('TEMPORAL_TLS_CA_PATH', e.TEMPORAL_TLS_CA_PATH).pem;
  if (e.TEMPORAL_TLS_CERT_PATH && e.TEMPORAL_TLS_KEY_PATH) {
    const crt = certificate('TEMPORAL_TLS_CERT_PATH', e.TEMPORAL_TLS_CERT_PATH);
    const pair = privateKey('TEMPORAL_TLS_KEY_PATH', e.TEMPORAL_TLS_KEY_PATH);
    if (!crt.first.checkPrivateKey(pair.key)) fail('TEMPORAL_TLS_KEY_PATH', `"${e.TEMPORAL_TLS_KEY_PATH}" is not the private key of the certificate in TEMPORAL_TLS_CERT_PATH`);
    tls.clientCertPair = { crt: crt.pem, key: new Secret(pair.pem) };
  }
  if (e.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = e.TEMPORAL_TLS_SERVER_NAME;
  return { tls, ...(apiKey ? { apiKey } : {}) };
}

/** CHROMA_AUTH_*, CHROMA_TENANT, CHROMA_DATABASE: for the Chroma CHROMA_URL names (the local one takes none). */
export function chromaAccess(e: ChromaEnv): ChromaAccess {
  const given = (['CHROMA_AUTH_TOKEN', 'CHROMA_AUTH_HEADER', 'CHROMA_TENANT', 'CHROMA_DATABASE'] as const).filter((v) => e[v] !== undefined);
  if (given.length > 0 && !e.CHROMA_URL) fail(given[0]!, 'applies to the Chroma CHROMA_URL names, and CHROMA_URL is unset (the local Chroma takes no token, tenant or database): set CHROMA_URL or remove it');
  if (e.CHROMA_AUTH_HEADER && !e.CHROMA_AUTH_TOKEN) fail('CHROMA_AUTH_TOKEN', 'required with CHROMA_AUTH_HEADER: the token that header carries');
  const token = e.CHROMA_AUTH_TOKEN;
  const header = e.CHROMA_AUTH_HEADER ?? 'Authorization';
  if (token !== undefined && /^bearer\s/i.test(token)) fail('CHROMA_AUTH_TOKEN', 'give the token alone: "Bearer " is added for CHROMA_AUTH_HEADER=Authorization');
  if (token !== undefined && !HEADER_SAFE.test(token)) fail('CHROMA_AUTH_TOKEN', 'contains spaces or characters a request header cannot carry');
  return {
    ...(token !== undefined ? { auth: { header, token: new Secret(token) } } : {}),
    ...(e.CHROMA_TENANT ? { tenant: e.CHROMA_TENANT } : {}),
    ...(e.CHROMA_DATABASE ? { database: e.CHROMA_DATABASE } : {}),
  };
}

/** The headers of every request to Chroma: its token, as CHROMA_AUTH_HEADER says to send it. */
export function chromaHeaders(access: ChromaAccess): Record<string, string> {
  const auth = access.auth;
  if (!auth) return {};
  return { [auth.header]: auth.header === 'Authorization' ? `Bearer ${auth.token.reveal()}` : auth.token.reveal() };
}

/** What a connection to Temporal takes, in the option names both SDK connections share. */
export type TemporalConnectOptions = { address: string; tls: TLSConfig | false; apiKey?: string } & ConnectionOptions & NativeConnectionOptions;

/**
 * The options of every connection to Temporal — the client's, each worker's, the readiness probe's
 * and the namespace set-up's — so that none of them connects plainly by accident. `tls: false`
 * when TLS is off, so an API key given with TEMPORAL_TLS=off is not taken to mean TLS by the SDK.
 */
export function temporalConnectOptions(settings: TemporalConnectionSettings, address: string): TemporalConnectOptions {
  const t = settings.tls;
  const tls: TLSConfig | false = t
    ? {
        ...(t.serverRootCACertificate ? { serverRootCACertificate: t.serverRootCACertificate } : {}),
        ...(t.clientCertPair ? { clientCertPair: { crt: t.clientCertPair.crt, key: t.clientCertPair.key.reveal() } } : {}),
        ...(t.serverNameOverride ? { serverNameOverride: t.serverNameOverride } : {}),
      }
    : false;
  return { address, tls, ...(settings.apiKey ? { apiKey: settings.apiKey.reveal() } : {}) };
}

/** How a connection to Temporal is made, in words for errors and start-up lines (never a secret). */
export function describeTemporalConnection(settings: TemporalConnectionSettings): string {
  const t = settings.tls;
  const parts = [
    !t ? 'plain gRPC' : `TLS (server CA: ${t.serverRootCACertificate ? 'TEMPORAL_TLS_CA_PATH' : 'system roots'}; client certificate: ${t.clientCertPair ? 'TEMPORAL_TLS_CERT_PATH' : 'none'}${t.serverNameOverride ? `; server name ${t.serverNameOverride}` : ''})`,
    ...(settings.apiKey ? ['API key TEMPORAL_API_KEY'] : []),
  ];
  return parts.join(', ');
}
