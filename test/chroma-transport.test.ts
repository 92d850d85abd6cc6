import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChromaClient } from 'chromadb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useChromaTransport } from '../src/adapters/chroma/chroma-transport';
import { chromaClient } from '../src/adapters/chroma/user-collections';

// A stand-in Chroma that answers the client's identity check, then whatever the test scripts for
// the collection count: the transport must give the client what the stock fetch gives it.
let server: Server;
let url: string;
let answer: { status: number; body: string; contentType?: string } = { status: 200, body: '7' };
const connections = new Set<unknown>();

beforeAll(async () => {
  server = createServer((req, res) => {
    connections.add(req.socket);
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.url?.endsWith('/auth/identity')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user_id: '', tenant: 'default_tenant', databases: ['default_database'] }));
        return;
      }
      res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json' }).end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function stockClient(): ChromaClient {
  const { hostname, port } = new URL(url);
  return new ChromaClient({ host: hostname, port: Number(port), ssl: false });
}

async function failureOf(client: ChromaClient): Promise<{ name: string; message: string; class: string }> {
  try {
    await client.countCollections();
  } catch (err) {
    const e = err as Error;
    return { name: e.name, message: e.message, class: e.constructor.name };
  }
  throw new Error('the call did not fail');
}

describe('the Chroma transport', () => {
  it('is installed on every client this service opens', () => {
    const client = chromaClient(url);
    const api = (client as unknown as { apiClient: { getConfig(): { fetch?: unknown } } }).apiClient;
    expect(api.getConfig().fetch).toBeTypeOf('function');
    expect((api.getConfig().fetch as { name?: string }).name).not.toBe('chromaFetch');
    // An upgrade of the client that moves its API layer must be noticed here, not found as a slower service.
    expect(useChromaTransport(stockClient())).toBe(true);
  });

  it('answers what the stock fetch answers', async () => {
    answer = { status: 200, body: '7' };
    expect(await chromaClient(url).countCollections()).toBe(7);
    expect(await stockClient().countCollections()).toBe(7);
  });

  const failures: [string, typeof answer][] = [
    ['400 with a message', { status: 400, body: JSON.stringify({ error: 'InvalidArgument', message: 'bad where clause' }) }],
    ['400 without JSON', { status: 400, body: 'nope', contentType: 'text/plain' }],
    ['401', { status: 401, body: JSON.stringify({ message: 'who are you' }) }],
    ['403', { status: 403, body: '{}' }],
    ['404', { status: 404, body: JSON.stringify({ message: 'no such collection' }) }],
    ['409', { status: 409, body: '{}' }],
    ['422 quota', { status: 422, body: JSON.stringify({ message: 'Quota exceeded: too many records' }) }],
    ['422 billing', { status: 422, body: JSON.stringify({ message: 'Billing limit exceeded' }) }],
    ['422 other', { status: 422, body: JSON.stringify({ message: 'dimension mismatch' }) }],
    ['422 without a message', { status: 422, body: '{}' }],
    ['422 without JSON', { status: 422, body: '<html>', contentType: 'text/html' }],
    ['429', { status: 429, body: '{}' }],
    ['500 with a message', { status: 500, body: JSON.stringify({ message: 'index corrupted' }) }],
    ['500 with an error field', { status: 500, body: JSON.stringify({ error: 'InternalError' }) }],
    ['503 without JSON', { status: 503, body: 'upstream down', contentType: 'text/plain' }],
  ];
  it.each(failures)('fails on %s with the stock client error, class and message', async (_label, scripted) => {
    answer = scripted;
    const ours = await failureOf(chromaClient(url));
    const stock = await failureOf(stockClient());
    expect(ours).toEqual(stock);
  });

  it('keeps its connection alive between requests', async () => {
    answer = { status: 200, body: '3' };
    const client = chromaClient(url);
    await client.countCollections();
    const before = connections.size;
    for (let i = 0; i < 5; i++) await client.countCollections();
    expect(connections.size).toBe(before);
  });

  it('fails on a refused connection with the client connection error', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const err = await chromaClient(`http://127.0.0.1:${port}`)
      .countCollections()
      .catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe('ChromaConnectionError');
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
  });

  it('reads a large answer that arrives in many chunks, whatever the bytes (UTF-8 across chunk edges)', async () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `记忆-${i}-🧠`);
    const big = await serveOnce((res) => {
      const body = Buffer.from(JSON.stringify({ ids: [ids], distances: [ids.map(() => 0.5)], metadatas: [ids.map(() => ({ user_id: 'u' }))], include: ['distances', 'metadatas'] }));
      res.writeHead(200, { 'content-type': 'application/json' });
      // Cut mid-character on purpose: a multi-byte character split over two chunks must survive.
      for (let at = 0; at < body.length; at += 4_093) res.write(body.subarray(at, at + 4_093));
      res.end();
    });
    const client = chromaClient(big.url);
    const transport = (client as unknown as { apiClient: { getConfig(): { fetch: (r: Request) => Promise<Response> } } }).apiClient.getConfig().fetch;
    const answer = (await (await transport(new Request(`${big.url}/api/v2/anything`, { method: 'POST', body: '{}' }))).json()) as { ids: string[][] };
    expect(answer.ids[0]).toEqual(ids);
    await big.close();
  });

  it('fails, without hanging, when the server drops the connection in the middle of an answer', async () => {
    const dropping = await serveOnce((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"ids": [[');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const err = await chromaClient(dropping.url)
      .countCollections()
      .catch((e: unknown) => e as Error);
    expect((err as Error).name).toBe('ChromaConnectionError');
    await dropping.close();
  });

  it('opens a new connection when the server closed the idle one', async () => {
    const short = await serveOnce((res) => res.writeHead(200, { 'content-type': 'application/json' }).end('5'));
    short.server.keepAliveTimeout = 30;
    const client = chromaClient(short.url);
    expect(await client.countCollections()).toBe(5);
    await new Promise((r) => setTimeout(r, 120));
    expect(await client.countCollections()).toBe(5);
    await short.close();
  });
});

/** A server of its own whose collection count is answered by `answer`, identity as the stand-in's. */
async function serveOnce(answer: (res: import('node:http').ServerResponse) => void): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const own = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url?.endsWith('/auth/identity')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user_id: '', tenant: 'default_tenant', databases: ['default_database'] }));
        return;
      }
      answer(res);
    });
  });
  await new Promise<void>((r) => own.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(own.address() as AddressInfo).port}`,
    server: own,
    close: async () => {
      own.closeAllConnections();
      await new Promise((r) => own.close(r));
    },
  };
}
