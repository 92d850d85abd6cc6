import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface TokenProxy {
  /** The URL to give the service instead of the Chroma behind it. */
  readonly url: string;
  /** Requests let through with the right token, and requests answered 401. */
  readonly forwarded: number;
  readonly refused: number;
  /** The header and value every request must carry from now on (a token rotated at the proxy). */
  expect(header: string, value: string): void;
  close(): Promise<void>;
}

/**
 * An HTTP reverse proxy in front of the local Chroma that wants a token, as a Chroma behind an
 * authenticating proxy or Chroma Cloud does: a request without the expected header value is
 * answered 401 and never reaches Chroma; the rest is forwarded as it came. The heartbeat is
 * answered to anyone, as Chroma itself answers it, so a check that only beats the heart cannot
 * tell a refused token from a working one.
 */
export async function startTokenProxy(target: string, expected: { header: string; value: string }): Promise<TokenProxy> {
  const upstream = new URL(target);
  let want = { header: expected.header.toLowerCase(), value: expected.value };
  let forwarded = 0;
  let refused = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const open = req.url === '/api/v2/heartbeat';
    if (!open && req.headers[want.header] !== want.value) {
      refused++;
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Unauthorized', message: 'missing or wrong token' }));
      return;
    }
    forwarded++;
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    get forwarded() {
      return forwarded;
    },
    get refused() {
      return refused;
    },
    expect(header, value) {
      want = { header: header.toLowerCase(), value };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
