import { describe, expect, it } from 'vitest';
import { completionText, injectMemory, lastUserIndex, messageText, proxyConversationId, recentTexts, recordable, StreamedAnswer, turnIds, type ChatMessage } from '../src/proxy/chat';

const context = { system: '[关于你的长期指令]\n- Answer in English', userPrefix: '<relevant-memories>\n- allergic to peanuts\n</relevant-memories>' };

describe('proxy: injection points', () => {
  it('appends the stable part to the system message and prefixes the last user message', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are Jarvis.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'What can I snack on?', name: 'ann' },
    ];
    const out = injectMemory(messages, context);
    expect(out[0]!.content).toBe(`You are Jarvis.\n\n${context.system}`);
    expect(out[1]!.content).toBe('hi');
    expect(out[3]).toEqual({ role: 'user', content: `${context.userPrefix}\n\nWhat can I snack on?`, name: 'ann' });
    // The caller's array is left as it was.
    expect(messages[3]!.content).toBe('What can I snack on?');
  });

  it('adds a system message when there is none, and handles content parts', () => {
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } };
    const out = injectMemory([{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, image] }], context);
    expect(out[0]).toEqual({ role: 'system', content: context.system });
    expect(out[1]!.content).toEqual([{ type: 'text', text: context.userPrefix }, { type: 'text', text: 'what is this?' }, image]);
    const developer = injectMemory([{ role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] }, { role: 'user', content: 'x' }], context);
    expect(developer[0]!.content).toEqual([{ type: 'text', text: 'Be brief.' }, { type: 'text', text: context.system }]);
  });

  it('injects nothing it was not given', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'x' }];
    expect(injectMemory(messages, { system: '', userPrefix: '' })).toEqual(messages);
  });
});

describe('proxy: reading requests', () => {
  it('finds the last user message and the exchanges before it', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'tool', content: 'c' },
      { role: 'user', content: [{ type: 'text', text: 'd' }, { type: 'text', text: 'e' }] },
      { role: 'assistant', content: null },
    ];
    expect(lastUserIndex(messages)).toBe(4);
    expect(messageText(messages[4])).toBe('d\ne');
    expect(recentTexts(messages, 4)).toEqual(['a', 'b']);
    expect(lastUserIndex([{ role: 'system', content: 's' }])).toBe(-1);
  });

  it('names the conversation by header, or by the user’s day', () => {
    const at = new Date('2026-03-01T20:30:00Z');
    expect(proxyConversationId('chat-1', at, 'UTC')).toBe('chat-1');
    expect(proxyConversationId(undefined, at, 'UTC')).toBe('proxy-2026-03-01');
    expect(proxyConversationId(undefined, at, 'Asia/Shanghai')).toBe('proxy-2026-03-02');
    expect(proxyConversationId(undefined, at, 'Not/AZone')).toBe('proxy-2026-03-01');
  });

  it('derives turn ids from the conversation and the history up to the user message', () => {
    const a: ChatMessage[] = [{ role: 'user', content: 'hello' }];
    const b: ChatMessage[] = [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }, { role: 'user', content: 'hello' }];
    const first = turnIds('c', a, 0);
    expect(turnIds('c', a, 0)).toEqual(first);
    expect(first.user).toMatch(/^px[A-Za-z0-9]{32}-u$/);
    expect(first.assistant).toBe(first.user.replace(/-u$/, '-a'));
    expect(turnIds('c', b, 2).user).not.toBe(first.user);
    expect(turnIds('d', a, 0).user).not.toBe(first.user);
  });

  it('makes text storable', () => {
    expect(recordable('  a\u0000b\n ', 10)).toEqual({ content: 'a b', truncated: false });
    expect(recordable('abcdef', 3)).toEqual({ content: 'abc', truncated: true });
    expect(recordable(' \u0001 ', 3)).toBeUndefined();
    expect(recordable('x\uD800y', 10)).toEqual({ content: 'x\uFFFDy', truncated: false });
  });
});

describe('proxy: answers', () => {
  it('reads a completion', () => {
    expect(completionText({ choices: [{ message: { role: 'assistant', content: 'Sure.' } }] })).toBe('Sure.');
    expect(completionText({ choices: [{ message: { role: 'assistant', content: null, tool_calls: [] } }] })).toBe('');
    expect(completionText(undefined)).toBe('');
  });

  it('assembles a stream split anywhere, first choice only', () => {
    const events = [
      { choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] },
      { choices: [{ index: 0, delta: { content: '你好' } }, { index: 1, delta: { content: 'other' } }] },
      { choices: [{ index: 0, delta: { content: ', world' } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ];
    const wire = `: keep-alive\n\n${events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join('')}data: [DONE]\n\n`;
    for (const size of [1, 3, 7, wire.length]) {
      const s = new StreamedAnswer();
      for (let i = 0; i < wire.length; i += size) s.push(wire.slice(i, i + size));
      s.end();
      expect(s.text).toBe('你好, world');
      expect(s.done).toBe(true);
    }
  });
});
