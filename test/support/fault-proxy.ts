import { connect, createServer, type Server, type Socket } from 'node:net';
import { ensureDatabase } from '../../src/stack/local-postgres';

/**
 * A TCP forwarder in front of a real dependency (Temporal, PostgreSQL, Chroma) that a test can
 * make fail the ways a production network does, without stopping the shared stack other test
 * files use:
 * - `hang()`: connections stay open and bytes are swallowed (a server stopped with SIGSTOP, a
 *   black-holed route). Nothing is refused, so only a client-side deadline ends a call.
 * - `cut()`: every connection is reset and new ones are refused (a server killed).
 * - `restore()`: forwarding resumes for new connections. Connections held through a hang are
 *   reset, since the bytes swallowed meanwhile leave their protocol streams broken; clients
 *   reconnect, as they do after a real outage.
 */
export interface FaultProxy {
  /** host:port to give the client under test instead of the dependency's own address. */
  readonly address: string;
  readonly port: number;
  hang(): void;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const separator = target.lastIndexOf(':');
  const host = target.slice(0, separator).replace(/^\[|\]$/gu, '') || '127.0.0.1';
  const targetPort = Number(target.slice(separator + 1));
  const sockets = new Set<Socket>();
  let state: 'forward' | 'hang' | 'cut' = 'forward';

  const onConnection = (client: Socket): void => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    const upstream = connect(targetPort, host);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    // Bytes are forwarded by hand rather than piped, so a hang can swallow them while both
    // sockets stay open, as a stopped process's kernel keeps accepting into its buffers.
    client.on('data', (chunk) => {
      if (state === 'forward') upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (state === 'forward') client.write(chunk);
    });
  };

  let server: Server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  const closeServer = (): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

  return {
    address: `127.0.0.1:${port}`,
    port,
    hang: () => {
      state = 'hang';
    },
    cut: async () => {
      state = 'cut';
      const closed = closeServer();
      for (const s of sockets) s.destroy();
      await closed;
    },
    restore: async () => {
      if (state === 'hang') for (const s of sockets) s.destroy();
      if (state === 'cut') {
        server = createServer(onConnection);
        await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      }
      state = 'forward';
    },
    close: async () => {
      const closed = server.listening ? closeServer() : Promise.resolve();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/**
 * A database of its own on the test stack's PostgreSQL (`test_<prefix>`), reached directly and
 * through a fault proxy: a test can hang or cut the proxied path without touching the server
 * other test files share.
 */
export async function proxiedTestDatabase(stackDatabaseUrl: string, prefix: string): Promise<{ directUrl: string; proxiedUrl: string; proxy: FaultProxy }> {
  const admin = new URL(stackDatabaseUrl);
  admin.pathname = '/postgres';
  await ensureDatabase(admin.toString(), `test_${prefix}`);
  const direct = new URL(stackDatabaseUrl);
  direct.pathname = `/test_${prefix}`;
  const proxy = await startFaultProxy(direct.host);
  const proxied = new URL(direct);
  proxied.host = proxy.address;
  return { directUrl: direct.toString(), proxiedUrl: proxied.toString(), proxy };
}
