import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';

/** A throwaway CA and the certificates it signed, as files (what the service's variables name) and as PEM. */
export interface TestPki {
  dir: string;
  caPath: string;
  serverCertPath: string;
  serverKeyPath: string;
  clientCertPath: string;
  clientKeyPath: string;
  /** A client pair signed by another CA: presented, and refused. */
  strangerCertPath: string;
  strangerKeyPath: string;
  pem(path: string): Buffer;
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    // The tests that need certificates need this tool; say so rather than fail on a spawn error.
    if (e.code === 'ENOENT') throw new Error('these tests make their certificates with `openssl`, which is not on PATH: install it (Debian: apt-get install openssl)');
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString().trim() ?? e.message}`);
  }
}

/** One key and a certificate signed by `ca` (or self-signed as a CA when `ca` is absent). */
function issue(dir: string, name: string, opts: { ca?: string; cn: string; ext: string }): void {
  const key = `${name}.key`;
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key], dir);
  writeFileSync(join(dir, `${name}.ext`), opts.ext);
  if (!opts.ca) {
    openssl(['req', '-x509', '-new', '-key', key, '-subj', `/CN=${opts.cn}`, '-days', '2', '-out', `${name}.pem`, '-extensions', 'v3', '-config', `${name}.ext`], dir);
    return;
  }
  openssl(['req', '-new', '-key', key, '-subj', `/CN=${opts.cn}`, '-out', `${name}.csr`], dir);
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${opts.ca}.pem`, '-CAkey', `${opts.ca}.key`, '-CAcreateserial', '-days', '2', '-out', `${name}.pem`, '-extfile', `${name}.ext`], dir);
}

const CA_EXT = '[req]\ndistinguished_name=dn\n[dn]\n[v3]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n';
const leaf = (usage: string, san?: string) => `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=${usage}\n${san ? `subjectAltName=${san}\n` : ''}`;

/**
 * Makes a CA, a server certificate for `localhost` / 127.0.0.1, a client certificate it signed and
 * a client certificate of a CA nobody trusts, with `openssl`, in a temporary directory.
 */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'jarvis-pki-'));
  issue(dir, 'ca', { cn: 'jarvis test CA', ext: CA_EXT });
  issue(dir, 'server', { ca: 'ca', cn: 'localhost', ext: leaf('serverAuth', 'DNS:localhost,IP:127.0.0.1') });
  issue(dir, 'client', { ca: 'ca', cn: 'jarvis-memory', ext: leaf('clientAuth') });
  issue(dir, 'stranger-ca', { cn: 'someone else', ext: CA_EXT });
  issue(dir, 'stranger', { ca: 'stranger-ca', cn: 'jarvis-memory', ext: leaf('clientAuth') });
  const at = (f: string) => join(dir, f);
  return {
    dir,
    caPath: at('ca.pem'),
    serverCertPath: at('server.pem'),
    serverKeyPath: at('server.key'),
    clientCertPath: at('client.pem'),
    clientKeyPath: at('client.key'),
    strangerCertPath: at('stranger.pem'),
    strangerKeyPath: at('stranger.key'),
    pem: (path) => readFileSync(path),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsTerminator {
  /** host:port to dial instead of the plain server's. */
  readonly address: string;
  readonly port: number;
  /** Connections whose TLS handshake completed, and those that failed it (a missing or foreign client certificate). */
  readonly accepted: number;
  readonly rejected: number;
  close(): Promise<void>;
}

/**
 * TLS in front of a plain TCP server (the local Temporal dev server, PostgreSQL with direct SSL
 * negotiation): what a managed service's endpoint looks like to a client. Once the handshake is
 * done the bytes are the plain protocol's (gRPC over HTTP/2, PostgreSQL's wire protocol), piped
 * both ways. With `requireClientCert`, a client without a certificate the CA signed never gets
 * through: mTLS.
 */
export async function startTlsTerminator(target: string, pki: TestPki, opts: { requireClientCert?: boolean; alpn?: string[] } = {}): Promise<TlsTerminator> {
  const separator = target.lastIndexOf(':');
  const host = target.slice(0, separator).replace(/^\[|\]$/gu, '') || '127.0.0.1';
  const targetPort = Number(target.slice(separator + 1));
  const sockets = new Set<Socket>();
  let accepted = 0;
  let rejected = 0;
  const server = createServer(
    {
      cert: pki.pem(pki.serverCertPath),
      key: pki.pem(pki.serverKeyPath),
      ca: pki.pem(pki.caPath),
      requestCert: opts.requireClientCert === true,
      rejectUnauthorized: opts.requireClientCert === true,
      ...(opts.alpn ? { ALPNProtocols: opts.alpn } : {}),
    },
    (client: TLSSocket) => {
      accepted++;
      const upstream = connect(targetPort, host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => {});
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream).pipe(client);
    },
  );
  server.on('tlsClientError', () => rejected++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    address: `127.0.0.1:${port}`,
    port,
    get accepted() {
      return accepted;
    },
    get rejected() {
      return rejected;
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
