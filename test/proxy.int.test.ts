import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryProxyOptions } from '../src/client/index';
import { FakeOpenAI } from './support/fake-openai';
import { createTestContext, OTHER_TENANT_KEY, TEST_KEY, type TestContext } from './support/harness';
import { poll } from './support/poll';

/**
 * The memory proxy with the official `openai` client, on the real stack, against a local fake
 * upstream that records what it received.
 */

const UPSTREAM_KEY = 'upstream-secret-key-0123456789';
const upstream = new FakeOpenAI();
let ctx: TestContext;
let user: string;

const openai = (opts: { apiKey?: string; userId?: string; conversationId?: string } = {}) =>
  new OpenAI({ ...memoryProxyOptions({ baseUrl: ctx.baseUrl, apiKey: opts.apiKey ?? TEST_KEY, userId: opts.userId ?? user, conversationId: opts.conversationId }), maxRetries: 0 });

async function recorded(c: TestContext, userId: string, conversationId: string, tenant = 'tenant-a'): Promise<{ message_id: string; role: string; content: string }[]> {
  const { rows } = await c.runtime.pool.query<{ message_id: string; role: string; content: string }>(
    'SELECT message_id, role, content FROM messages WHERE user_id = $1 AND conversation_id = $2 ORDER BY said_at, message_id',
    [c.userKey(userId, tenant), conversationId],
  );
  return rows;
}

const lastUserContent = () => {
  const messages = upstream.last().body.messages as { role: string; content: string }[];
  return messages.filter((m) => m.role === 'user').at(-1)!.content;
};

beforeAll(async () => {
  await upstream.start();
  // The default budget (1.5 s) is for production; on a loaded CI machine recall can take longer,
  // and these tests are about what the proxy does with a recall, not how fast it is (the
  // 'timeout' path has its own context below).
  // No persona in the context: once its debounced rebuild has run, the persona states the allergy
  // in the system part and leaves it out of the memories (by design), and these tests check where
  // the proxy puts the per-message memories, whenever the rebuild happens to land.
  ctx = await createTestContext({ UPSTREAM_BASE_URL: upstream.baseUrl, UPSTREAM_API_KEY: UPSTREAM_KEY, CONVERSATION_IDLE_SECONDS: '2', PROXY_RECALL_TIMEOUT_MS: '15000', RECALL_PERSONA_SHARE: '0' });
  user = `${ctx.prefix}-proxy`;
  expect((await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'I am allergic to peanuts', type: 'fact', importance: 0.9 })).status).toBe(201);
  const instruction = await ctx.call('POST', `/v1/users/${user}/memories`, { text: 'Always answer in British English', type: 'instruction', scope: 'global' });
  expect(instruction.status).toBe(201);
  // A directly written instruction waits for the user's confirmation (docs/security.md).
  expect((await ctx.call('POST', `/v1/users/${user}/memories/${instruction.body.memory.id}/confirm`)).status).toBe(200);
});

afterAll(async () => {
  await ctx?.close();
  await upstream.stop();
});

describe('memory proxy: POST /proxy/v1/chat/completions', () => {
  it('injects memory, forwards the caller’s model and options with the upstream key, answers unchanged, and records both turns', async () => {
    const { data, response } = await openai({ conversationId: 'chat-plain' })
      .chat.completions.create({
        model: 'gpt-test',
        temperature: 0.2,
        max_tokens: 64,
        user: 'end-user-7',
        messages: [
          { role: 'system', content: 'You are Jarvis.' },
          { role: 'user', content: 'Am I allergic to anything? Peanuts maybe?' },
        ],
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe(upstream.reply);
    expect(response.headers.get('x-memory-recall')).toBe('ok');
    expect(Number(response.headers.get('x-memory-injected'))).toBeGreaterThan(0);
    expect(response.headers.get('x-memory-conversation')).toBe('chat-plain');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);

    const sent = upstream.last();
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    // The caller's memory key and user header stay here.
    expect(JSON.stringify(sent.headers)).not.toContain(TEST_KEY);
    expect(sent.headers['x-memory-user']).toBeUndefined();
    expect(sent.body).toMatchObject({ model: 'gpt-test', temperature: 0.2, max_tokens: 64, user: 'end-user-7' });
    const [system, last] = sent.body.messages as { role: string; content: string }[];
    expect(system!.role).toBe('system');
    expect(system!.content.startsWith('You are Jarvis.\n\n')).toBe(true);
    expect(system!.content).toContain('Always answer in British English');
    expect(last!.content.startsWith('<relevant-memories>')).toBe(true);
    expect(last!.content).toContain('I am allergic to peanuts');
    expect(last!.content.endsWith('\n\nAm I allergic to anything? Peanuts maybe?')).toBe(true);
    expect(last!.content).not.toContain('British English');

    const rows = await poll(() => recorded(ctx, user, 'chat-plain'), (r) => r.length === 2);
    expect(rows.map((r) => [r.role, r.content])).toEqual([
      ['user', 'Am I allergic to anything? Peanuts maybe?'],
      ['assistant', upstream.reply],
    ]);
    expect(rows[0]!.message_id).toMatch(/^px[A-Za-z0-9]{32}-u$/);
    expect(rows[1]!.message_id).toBe(rows[0]!.message_id.replace(/-u$/, '-a'));
  });

  it('records a retried request once', async () => {
    const client = openai({ conversationId: 'chat-retry' });
    const first = [{ role: 'user' as const, content: 'What should I cook tonight?' }];
    await client.chat.completions.create({ model: 'gpt-test', messages: first });
    await client.chat.completions.create({ model: 'gpt-test', messages: first });
    await client.chat.completions.create({ model: 'gpt-test', messages: [...first, { role: 'assistant', content: upstream.reply }, { role: 'user', content: 'And for dessert?' }] });
    const rows = await poll(() => recorded(ctx, user, 'chat-retry'), (r) => r.some((m) => m.content === 'And for dessert?') && r.length >= 4);
    expect(rows.map((r) => r.content)).toEqual(['What should I cook tonight?', upstream.reply, 'And for dessert?', upstream.reply]);
  });

  it('streams the answer back byte for byte and records the assembled text', async () => {
    const { data: stream, response } = await openai({ conversationId: 'chat-stream' })
      .chat.completions.create({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Any snack ideas? Remember my allergies.' }] })
      .withResponse();
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-memory-recall')).toBe('ok');
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(text).toBe(upstream.reply);
    expect(chunks).toBeGreaterThan(3);
    expect(upstream.last().body.stream).toBe(true);
    expect(lastUserContent()).toContain('I am allergic to peanuts');
    const rows = await poll(() => recorded(ctx, user, 'chat-stream'), (r) => r.length === 2);
    expect(rows.map((r) => r.content)).toEqual(['Any snack ideas? Remember my allergies.', upstream.reply]);

    // The same request without a client library: what arrives is what the upstream sent.
    const raw = await fetch(`${ctx.baseUrl}/proxy/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'x-memory-user': user, 'x-memory-conversation': 'chat-stream-raw', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'Once more, snack ideas?' }] }),
    });
    expect(await raw.text()).toBe(upstream.lastStream);
  });

  it('records in one conversation per user and day when the caller names none', async () => {
    const before = new Date().toISOString().slice(0, 10);
    const { response } = await openai().chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Good morning!' }] }).withResponse();
    const after = new Date().toISOString().slice(0, 10);
    const conversation = response.headers.get('x-memory-conversation')!;
    expect([`proxy-${before}`, `proxy-${after}`]).toContain(conversation);
    const rows = await poll(() => recorded(ctx, user, conversation), (r) => r.length === 2);
    expect(rows[0]!.content).toBe('Good morning!');
  });

  it('lets idle extraction follow: what the user said through the proxy becomes a memory', async () => {
    await openai({ conversationId: 'chat-idle' }).chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'By the way, I am allergic to shellfish.' }] });
    const memories = await poll(
      () => ctx.call('GET', `/v1/users/${user}/memories?limit=50`),
      (r) => r.body.memories.some((m: { text: string }) => /shellfish/.test(m.text)),
      60_000,
      500,
    );
    const memory = memories.body.memories.find((m: { text: string }) => /shellfish/.test(m.text));
    expect(memory, JSON.stringify(memories.body)).toBeDefined();
    expect(memory.source.conversationId).toBe('chat-idle');
  });

  it('maps an upstream error to its own error shape (502 upstream_failed, nothing of the upstream body), with nothing recorded as an answer', async () => {
    const error = await openai({ conversationId: 'chat-error' })
      .chat.completions.create({ model: 'upstream-error', messages: [{ role: 'user', content: 'hello?' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).not.toContain('does not exist');
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'upstream_failed', details: { upstreamStatus: 400 } });
    expect(await recorded(ctx, user, 'chat-error')).toEqual([]);
  });
});

describe('memory proxy: auth', () => {
  const ask = (client: OpenAI) => client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Am I allergic to peanuts?' }] });

  it('refuses no key, a wrong key, and a missing or malformed user or conversation header, before anything goes upstream', async () => {
    const sentBefore = upstream.requests.length;
    await expect(ask(openai({ apiKey: 'wrong-key-0123456789' }))).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const noKey = await fetch(`${ctx.baseUrl}/proxy/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-memory-user': user, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(noKey.status).toBe(401);
    for (const bad of ['bad user', '../etc', '-x', 'a'.repeat(129)]) {
      await expect(ask(openai({ userId: bad })), bad).rejects.toMatchObject({ status: 400 });
    }
    const noUser = new OpenAI({ baseURL: `${ctx.baseUrl}/proxy/v1`, apiKey: TEST_KEY, maxRetries: 0 });
    await expect(ask(noUser)).rejects.toMatchObject({ status: 400 });
    await expect(ask(openai({ conversationId: 'bad conversation' }))).rejects.toMatchObject({ status: 400 });
    expect(upstream.requests.length).toBe(sentBefore);
  });

  it("gives tenant B's same user id none of tenant A's memories, and records under tenant B", async () => {
    await ask(openai({ apiKey: OTHER_TENANT_KEY, conversationId: 'chat-b' }));
    expect(lastUserContent()).toBe('Am I allergic to peanuts?');
    expect(JSON.stringify(upstream.last().body)).not.toContain('British English');
    const rows = await poll(() => recorded(ctx, user, 'chat-b', 'tenant-b'), (r) => r.length === 2);
    expect(rows[0]!.content).toBe('Am I allergic to peanuts?');
    expect(await recorded(ctx, user, 'chat-b')).toEqual([]);
  });
});

describe('memory proxy: recall past its time budget', () => {
  let slow: TestContext;

  beforeAll(async () => {
    // A 1 ms budget: recall (embedding, PostgreSQL, Chroma) cannot answer in time.
    slow = await createTestContext({ UPSTREAM_BASE_URL: upstream.baseUrl, UPSTREAM_API_KEY: UPSTREAM_KEY, PROXY_RECALL_TIMEOUT_MS: '1' });
    expect((await slow.call('POST', `/v1/users/${user}/memories`, { text: 'I am allergic to peanuts', type: 'fact' })).status).toBe(201);
  });

  afterAll(async () => {
    await slow?.close();
  });

  it('forwards without memory and says so in a response header', async () => {
    const client = new OpenAI({ ...memoryProxyOptions({ baseUrl: slow.baseUrl, apiKey: TEST_KEY, userId: user, conversationId: 'chat-slow' }), maxRetries: 0 });
    const messages = [
      { role: 'system' as const, content: 'You are Jarvis.' },
      { role: 'user' as const, content: 'Am I allergic to peanuts?' },
    ];
    const { data, response } = await client.chat.completions.create({ model: 'gpt-test', messages }).withResponse();
    expect(response.headers.get('x-memory-recall')).toBe('timeout');
    expect(response.headers.get('x-memory-injected')).toBe('0');
    expect(data.choices[0]!.message.content).toBe(upstream.reply);
    expect(upstream.last().body.messages).toEqual(messages);
    const rows = await poll(() => recorded(slow, user, 'chat-slow'), (r) => r.length === 2);
    expect(rows.map((r) => r.role)).toEqual(['user', 'assistant']);
  });
});
