import { describe, expect, it } from 'vitest';
import { buildSuggestions, dominantLanguage, findOpenQuestions, isQuestion, renderDigestTemplate, summarizeConversations, type DigestMessage, type DigestSections } from '../../../src/core/proactive/digest-content';
import { resolveSettings } from '../../../src/core/proactive/settings';
import { jiebaSegmenter } from '../../../src/adapters/text/jieba';

const at = (min: number) => new Date(Date.UTC(2026, 5, 10, 2, min));
const msg = (conversationId: string, role: 'user' | 'assistant', content: string, min: number): DigestMessage => ({ conversationId, role, content, at: at(min) });

describe('digest content', () => {
  it('recognises questions in both languages', () => {
    for (const q of ['payment-svc 为什么总是超时？', '这个方案可以吗', 'How do I rotate the keys?', '怎么办']) expect(isQuestion(q)).toBe(true);
    for (const s of ['我对花生过敏。', 'I love hiking.', '好的']) expect(isQuestion(s)).toBe(false);
  });

  it('open questions: unanswered, or answered only with "I don’t know"', () => {
    const open = findOpenQuestions([
      msg('c1', 'user', 'payment-svc 为什么总是超时？', 0),
      msg('c1', 'assistant', '可能是连接池太小，建议调大到 50。', 1),
      msg('c1', 'user', '那数据库要不要分库？', 2),
      msg('c1', 'assistant', '这个我不确定，需要看你们的数据量。', 3),
      msg('c2', 'user', 'What should I cook for the party?', 4),
      msg('c2', 'user', 'I love hiking.', 5),
    ]);
    expect(open.map((q) => q.text)).toEqual(['那数据库要不要分库', 'What should I cook for the party']);
  });

  it('summarises conversations with counts, topics and opening lines', () => {
    const s = summarizeConversations([
      msg('c1', 'user', 'payment-svc 又超时了，payment-svc 的连接池要调', 0),
      msg('c1', 'assistant', '好的', 1),
      msg('c2', 'user', '周末去爬山', 2),
    ], jiebaSegmenter);
    expect(s.count).toBe(2);
    expect(s.messages).toBe(3);
    expect(s.topics[0]).toBe('payment-svc');
    expect(s.topics).not.toContain('svc');
    expect(s.highlights).toEqual(['payment-svc 又超时了，payment-svc 的连接池要调', '周末去爬山']);
  });

  it('renders a bilingual template with every section, even on an empty day', () => {
    const empty: DigestSections = { date: '2026-06-10', timeZone: 'Asia/Shanghai', lang: 'zh', conversations: { count: 0, messages: 0, topics: [], highlights: [] }, importantMemories: [], openQuestions: [], suggestions: [] };
    const text = renderDigestTemplate(empty);
    for (const h of ['今日对话 / Conversations', '重要记忆 / Important memories', '待解答 / Open questions', '建议 / Suggestions', '今天没有聊天。']) expect(text).toContain(h);
    const en = renderDigestTemplate({ ...empty, lang: 'en', importantMemories: [{ id: '1', text: 'I am allergic to peanuts', type: 'fact', importanceLevel: 'critical' }], suggestions: ['Rest.'] });
    expect(en).toContain("💬 Today's conversations / 今日对话");
    expect(en).toContain('- [fact|critical] I am allergic to peanuts');
  });

  it('suggests from tomorrow’s reminders, open questions, pain points and goals', () => {
    const s = buildSuggestions({
      lang: 'zh',
      openQuestions: 2,
      painPoints: [{ id: 'p', text: '最困扰我的是每天晚上超时', type: 'pain_point', importanceLevel: 'high' }],
      goals: [{ id: 'g', text: '我的目标是年底前把 P99 降到 50ms', type: 'goal', importanceLevel: 'high' }],
      tomorrow: [{ id: 'r', text: '开会', dueAt: new Date('2026-06-11T07:00:00Z') }],
      timeZone: 'Asia/Shanghai',
    });
    expect(s).toHaveLength(4);
    expect(s[0]).toContain('明天 15:00 有「开会」');
    expect(s[1]).toContain('2 个问题');
    expect(dominantLanguage([msg('c', 'user', 'hello there', 0), msg('c', 'user', 'how are you?', 1)], [])).toBe('en');
  });
});

describe('settings', () => {
  it('fills defaults and ignores malformed stored values', () => {
    const s = resolveSettings('Asia/Shanghai', { digestTime: '7pm', proactive: { enabled: false, probability: 7, quietHours: { start: '23:00' } }, other: 1 });
    expect(s).toEqual({ timezone: 'Asia/Shanghai', digestTime: '22:00', proactive: { enabled: false, probability: 0.3, maxPerDay: 2, quietHours: { start: '23:00', end: '08:00' } } });
    expect(resolveSettings('UTC', null, { digestTime: '21:30' }).digestTime).toBe('21:30');
  });
});
