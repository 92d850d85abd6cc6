import { isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { TemporalConnectionSettings } from '../config';

/** An error's message and its causes' on one line (the SDK's transport errors hide the reason in a cause). */
export function rootReason(err: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 5; e = e instanceof Error ? e.cause : undefined, depth++) {
    messages.push((e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ').trim());
  }
  return messages.filter(Boolean).join(' ← ').slice(0, 400);
}

/**
 * What a TLS handshake with the same settings says, when a connection failed: the SDKs report an
 * unknown CA, a wrong server name or a refused client certificate as "failed to connect before the
 * deadline" or a bare transport error, while the TLS alert names it. Undefined when the handshake
 * went through and the server spoke (TLS is not the problem), or when TLS is off.
 */
export async function tlsDiagnosis(settings: TemporalConnectionSettings, address: string, timeoutMs = 3000): Promise<string | undefined> {
  const tls = settings.tls;
  if (!tls) return undefined;
  const separator = address.lastIndexOf(':');
  const host = address.slice(0, separator).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(separator + 1));
  const servername = tls.serverNameOverride ?? (isIP(host) ? undefined : host);
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host,
      port,
      ...(servername ? { servername } : {}),
      ...(tls.serverRootCACertificate ? { ca: tls.serverRootCACertificate } : {}),
      ...(tls.clientCertPair ? { cert: tls.clientCertPair.crt, key: tls.clientCertPair.key.reveal() } : {}),
      ALPNProtocols: ['h2'],
    });
    const done = (finding: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(finding);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    // With TLS 1.3 a refused client certificate arrives after the client's side of the handshake,
    // as an alert or as the connection closed: wait for the server's first bytes (an HTTP/2
    // server sends its settings at once).
    let handshaken = false;
    socket.once('secureConnect', () => {
      handshaken = true;
      socket.once('data', () => done(undefined));
    });
    socket.once('error', (err) => done(`TLS: ${tlsReason(err)}`));
    socket.once('close', () => done(handshaken ? 'TLS: the server closed the connection right after the handshake (it did not accept the client certificate, or the server name)' : undefined));
  });
}

/** OpenSSL's "…:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:…" as "tlsv13 alert certificate required". */
export function tlsReason(err: Error): string {
  const alert = /(?:tlsv\d+ )?alert [a-z ]+/i.exec(err.message);
  return (alert ? alert[0] : err.message).replace(/\s+/g, ' ').trim();
}

/** What to change when a diagnosis says the server wanted a client certificate it was not given. */
export function tlsHint(settings: TemporalConnectionSettings, finding: string): string {
  const refusedWithout = /certificate required|handshake failure|closed the connection/i.test(finding) && !settings.tls?.clientCertPair;
  return refusedWithout ? ' (the server asks for a client certificate: set TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH)' : '';
}
