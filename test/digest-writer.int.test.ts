import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDigestTemplate, type DigestSections } from '../src/core/proactive/digest-content';
import { openChatModel } from '../src/adapters/llm/chat-model';
import { LangChainDigestModel } from '../src/adapters/llm/digest-model';
import { writeDigest } from '../src/proactive/digest-writer';

// The digest's LLM path against a local OpenAI-compatible endpoint (no model ships offline):
// a model that answers writes the digest; one that fails leaves the template, with the reason.
let server: Server;
let base: string;
let requests: { model: string; messages: { role: string; content: string }[] }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body);
      requests.push(parsed);
      if (parsed.model === 'broken') {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'boom' } }));
        return;
      }
      const content = '今日对话 / Conversations：你和我聊了 payment-svc 的超时问题。建议 / Suggestions：明天先看连接池。';
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: parsed.model, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** The digest model as src/runtime.ts wires it for an OpenAI-compatible LLM. */
const configured = (model: string) => new LangChainDigestModel(() => openChatModel({ provider: 'openai-compatible', baseUrl: base, apiKey: 'k', model }));

const sections: DigestSections = {
  date: '2026-06-10',
  timeZone: 'Asia/Shanghai',
  lang: 'zh',
  conversations: { count: 1, messages: 2, topics: ['payment-svc'], highlights: ['payment-svc 又超时了'] },
  importantMemories: [],
  openQuestions: [],
  suggestions: [],
};

describe('digest writer', () => {
  it('uses the configured model and gives it only the gathered sections', async () => {
    requests = [];
    const out = await writeDigest(sections, renderDigestTemplate(sections), configured('tiny'));
    expect(out.generatedBy).toBe('llm');
    expect(out.text).toContain('payment-svc');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.messages.at(-1)!.content).toBe(JSON.stringify(sections));
  });

  it('falls back to the bilingual template when the model fails, and says why', async () => {
    const template = renderDigestTemplate(sections);
    const out = await writeDigest(sections, template, configured('broken'));
    expect(out).toMatchObject({ generatedBy: 'template', text: template });
    expect(out.fallbackReason).toMatch(/model failed/);
    expect((await writeDigest(sections, template)).generatedBy).toBe('template');
  });
});
