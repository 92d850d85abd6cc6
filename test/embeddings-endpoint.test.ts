import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddingsEndpoint } from '../src/adapters/embeddings/embeddings-endpoint';
import { ErrorCode, MemoryServiceError } from '../src/core/errors';

interface Seen {
  texts: string[];
  inputType: string;
  startedAt: number;
}

// Like the bundled server: one request computed at a time, in arrival order, each text costing
// `msPerText`; `answer` can replace the normal reply for a request.
async function serialServer(opts: { msPerText: number; answer?: (n: number) => number | undefined }): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  let busy = Promise.resolve();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as { input: string[]; input_type: string };
      busy = busy.then(async () => {
        const n = seen.push({ texts: body.input, inputType: body.input_type, startedAt: Date.now() });
        await new Promise((r) => setTimeout(r, opts.msPerText * body.input.length));
        const status = opts.answer?.(n);
        if (status) {
          res.writeHead(status).end('{}');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: body.input.map((t, index) => ({ index, embedding: [t.length, index] })) }));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen, server };
}

let servers: Server[] = [];
afterEach(async () => {
  // Without dropping the keep-alive sockets, close() waits for their idle timeout.
  await Promise.all(servers.map((s) => new Promise((r) => (s.close(r), s.closeAllConnections()))));
  servers = [];
});

async function start(opts: Parameters<typeof serialServer>[0]) {
  const s = await serialServer(opts);
  servers.push(s.server);
  return s;
}

describe('EmbeddingsEndpoint', () => {
  it('answers in the order asked and cuts background work into small batches', async () => {
    const { url, seen } = await start({ msPerText: 0 });
    const endpoint = new EmbeddingsEndpoint({ baseUrl: url, model: 'e5', backgroundBatchSize: 4, backgroundBatchChars: 10 });
    const texts = ['a', 'bb', 'ccc', 'dddd', 'e', 'f', 'g', 'h', 'i'];
    expect(await endpoint.embed({ texts, inputType: 'passage', lane: 'background' })).toEqual(texts.map((t) => [t.length, expect.any(Number)]));
    // At most 4 texts and 10 characters per request (a longer text alone is still sent).
    expect(seen.map((s) => s.texts)).toEqual([['a', 'bb', 'ccc', 'dddd'], ['e', 'f', 'g', 'h'], ['i']]);
    expect(await endpoint.embed({ texts: ['x'.repeat(50)], inputType: 'query', lane: 'background' })).toEqual([[50, 0]]);
    expect(seen.at(-1)).toMatchObject({ inputType: 'query' });
  });

  it('a query waits for one background batch at most, not for the whole backlog', async () => {
    const { url, seen } = await start({ msPerText: 20 });
    const endpoint = new EmbeddingsEndpoint({ baseUrl: url, model: 'e5', backgroundBatchSize: 5 });
    // 40 texts of bulk work from two callers: 8 batches of 100 ms each, 800 ms of work.
    const backlog = [1, 2].map((c) => endpoint.embed({ texts: Array.from({ length: 20 }, (_, i) => `bulk ${c} ${i}`), inputType: 'passage', lane: 'background' }));
    await new Promise((r) => setTimeout(r, 30));
    await endpoint.embed({ texts: ['what am I allergic to'], inputType: 'query' });
    await Promise.all(backlog);
    const queryIndex = seen.findIndex((s) => s.inputType === 'query');
    // Only the batch in flight when the query came went before it.
    expect(queryIndex).toBe(1);
    expect(seen).toHaveLength(9);
  });

  it('does not resend a request that timed out (the server is still computing it)', async () => {
    const { url, seen } = await start({ msPerText: 300 });
    const endpoint = new EmbeddingsEndpoint({ baseUrl: url, model: 'e5', timeoutMs: 100, retries: 3 });
    const failure = await endpoint.embed({ texts: ['slow'], inputType: 'passage' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(MemoryServiceError);
    expect(failure).toMatchObject({ code: ErrorCode.embedderUnavailable, context: { timedOut: true } });
    await new Promise((r) => setTimeout(r, 400));
    expect(seen).toHaveLength(1);
  });

  it('retries a 503 with backoff, and gives a 400 back at once', async () => {
    const flaky = await start({ msPerText: 0, answer: (n) => (n <= 2 ? 503 : undefined) });
    const endpoint = new EmbeddingsEndpoint({ baseUrl: flaky.url, model: 'e5', retries: 2 });
    expect(await endpoint.embed({ texts: ['ok'], inputType: 'passage' })).toEqual([[2, 0]]);
    expect(flaky.seen).toHaveLength(3);

    const refusing = await start({ msPerText: 0, answer: () => 400 });
    const bad = new EmbeddingsEndpoint({ baseUrl: refusing.url, model: 'e5', retries: 2 });
    await expect(bad.embed({ texts: ['no'], inputType: 'passage' })).rejects.toMatchObject({ code: ErrorCode.embedderUnavailable, context: { status: 400 } });
    expect(refusing.seen).toHaveLength(1);
  });

  it('an endpoint nobody listens on fails as embedder_unavailable after its retries', async () => {
    const { url, server } = await start({ msPerText: 0 });
    await new Promise((r) => (server.close(r), server.closeAllConnections()));
    servers = servers.filter((s) => s !== server);
    const endpoint = new EmbeddingsEndpoint({ baseUrl: url, model: 'e5', retries: 1 });
    await expect(endpoint.embed({ texts: ['x'], inputType: 'passage' })).rejects.toMatchObject({ code: ErrorCode.embedderUnavailable, context: { timedOut: false } });
  });
});
