import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../src/config';
import { createRuntime, type Runtime } from '../src/runtime';

// An OpenAI-compatible embeddings endpoint this file can take away, so the probe's answer can be
// compared with the endpoint's real state (the shared stack's embedder is left alone).
let server: Server;
let url = '';
let runtime: Runtime;

function embeddings(): Promise<void> {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { input: string[] };
      const data = body.input.map((_, index) => ({ index, embedding: Array.from({ length: 384 }, (_, i) => (i === index % 384 ? 1 : 0)) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`;
      resolve();
    }),
  );
}

beforeAll(async () => {
  await embeddings();
  const stack = inject('stack');
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', EMBEDDINGS_PROVIDER: 'openai-compatible', EMBEDDINGS_URL: url });
  runtime = await createRuntime(config, { ...stack, embeddingsUrl: url, dataDir: '.data' });
});

afterAll(async () => {
  await runtime?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe('/healthz and the embedder', () => {
  it('reports the embedder down once it stops answering, not the first probe’s cached answer', async () => {
    const api = await runtime.createApi();
    try {
      const before = await api.inject({ method: 'GET', url: '/healthz' });
      expect(before.json().checks.embedder.status).toBe('ok');

      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));

      const after = await api.inject({ method: 'GET', url: '/healthz' });
      expect(after.json().checks.embedder.status).toBe('down');
      expect(after.statusCode).toBe(503);
    } finally {
      await api.close();
    }
  });
});
