import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from './support/harness';

// The chat integrations are imported lazily (src/adapters/llm/chat-model.ts): a runtime configured
// with a model must still load and wire it, so its extraction and query rewrites reach the model.
// A local OpenAI-compatible endpoint that records the requests and answers 500: what counts
// here is that the request arrives.
let server: Server;
const models: string[] = [];
let ctx: TestContext | undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      models.push((JSON.parse(body) as { model: string }).model);
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not a real model' } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  ctx = await createTestContext({ LLM_PROVIDER: 'openai-compatible', LLM_BASE_URL: base, LLM_API_KEY: 'k', LLM_MODEL: 'lazy-test-model' });
}, 120_000);
afterAll(async () => {
  await ctx?.close();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('a runtime with a configured LLM', () => {
  it('loads the chat model it was not given statically and sends extraction and rewrites to it', { timeout: 60_000 }, async () => {
    const deps = ctx!.runtime.deps;
    expect(deps.extractor.name).toBe('llm:lazy-test-model');
    // A model that fails is an error for the activity to retry: the request reached the endpoint.
    await expect(deps.extractor.extract({ messages: [{ id: 'm1', role: 'user', content: 'I am allergic to peanuts.', at: new Date() }], timezone: 'UTC' })).rejects.toThrow(/not a real model/);
    expect(models).toContain('lazy-test-model');
    expect(deps.queryRewriter).toBeDefined();
  });
});
