import { FakeListChatModel } from '@langchain/core/utils/testing';
import { describe, expect, it } from 'vitest';
import { LlmExtractor } from '../src/adapters/llm/llm-extractor';
import { parseExtractionReply } from '../src/adapters/llm/extraction-schema';
import type { ConversationMessage } from '../src/core/types';
import { OfflineExtractor } from '../src/adapters/extraction/offline-extractor';

// LangChain's own fake chat model stands in for the LLM: these are pure unit tests of parsing,
// retry-with-errors and fallback; no network.
const at = new Date('2026-06-28T02:00:00Z');
const messages: ConversationMessage[] = [
  { id: 'm1', role: 'user', content: '我对花生过敏，这个很重要。', at },
  { id: 'm2', role: 'assistant', content: '可以试试《三体》。', at },
];
const good = JSON.stringify({
  memories: [
    { text: '我对花生过敏', type: 'fact', confidence: '0.95', importance: 0.9, messageIds: ['m1'], keywords: ['花生', '过敏'] },
    { text: '助手推荐了《三体》', type: 'assistant_contribution', confidence: 0.9, messageIds: ['m2'] },
  ],
});

describe('parseExtractionReply', () => {
  it('accepts a fenced reply, coerces numbers and fills defaults', () => {
    const { memories, problems } = parseExtractionReply('Here you go:\n```json\n' + good + '\n```');
    expect(problems).toEqual([]);
    expect(memories[0]).toMatchObject({ text: '我对花生过敏', type: 'fact', confidence: 0.95, scope: 'global', intent: 'assert', entities: [] });
  });

  it('drops items with unknown types and reports them, never guessing a type', () => {
    const { memories, problems } = parseExtractionReply(JSON.stringify({ memories: [{ text: 'x', type: 'gossip', messageIds: ['m1'] }, { text: '我喜欢蓝色', type: 'Preference', messageIds: ['m1'] }] }));
    expect(memories.map((m) => m.type)).toEqual(['preference']);
    expect(problems[0]).toMatch(/unknown type "gossip"/);
  });

  it('rejects replies without a JSON object', () => {
    expect(() => parseExtractionReply('I could not find anything.')).toThrow(/no JSON object/);
  });
});

describe('LlmExtractor', () => {
  it('turns a valid reply into candidates with provenance, in the user’s language', async () => {
    const extractor = new LlmExtractor(new FakeListChatModel({ responses: [good] }), new OfflineExtractor(), 'fake');
    const { candidates, report } = await extractor.extract({ messages, timezone: 'Asia/Shanghai' });
    expect(report).toMatchObject({ extractor: 'llm:fake', attempts: 1, fellBack: false });
    expect(candidates.map((c) => [c.type, c.text, c.role, c.messageIds])).toEqual([
      ['fact', '我对花生过敏', 'user', ['m1']],
      ['assistant_contribution', '助手推荐了《三体》', 'assistant', ['m2']],
    ]);
    expect(candidates[0]!.emotionTags).toContain('很重要');
  });

  it('retries once with the validation error, then uses the corrected reply', async () => {
    const model = new FakeListChatModel({ responses: ['{"memories": "oops"', good] });
    const { candidates, report } = await new LlmExtractor(model, new OfflineExtractor(), 'fake').extract({ messages, timezone: 'UTC' });
    expect(report.attempts).toBe(2);
    expect(report.problems[0]).toMatch(/attempt 1/);
    expect(candidates).toHaveLength(2);
  });

  it('falls back to the offline rules when the model stays unusable, recording why', async () => {
    const model = new FakeListChatModel({ responses: ['nothing here', 'still nothing'] });
    const { candidates, report } = await new LlmExtractor(model, new OfflineExtractor(), 'fake').extract({ messages, timezone: 'UTC' });
    expect(report.fellBack).toBe(true);
    expect(report.problems).toHaveLength(2);
    expect(candidates.some((c) => c.text.includes('花生'))).toBe(true);
  });

  it('drops memories that cite no message of the conversation', async () => {
    const reply = JSON.stringify({ memories: [{ text: '我住在火星', type: 'fact', messageIds: ['m99'] }] });
    const { candidates } = await new LlmExtractor(new FakeListChatModel({ responses: [reply] }), new OfflineExtractor(), 'fake').extract({ messages, timezone: 'UTC' });
    expect(candidates).toEqual([]);
  });
});
