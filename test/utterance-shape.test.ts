import { describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../src/adapters/text/jieba';
import { planOfflineExtraction } from '../src/core/extraction/offline-extractor';
import { isFailureReport, isRequestToAssistant, isSmallTalk } from '../src/core/text/utterance-shape';
import { isFillerExchange, withoutFiller } from '../src/core/recall/filler';
import type { ConversationMessage } from '../src/core/types';

const types = (text: string) =>
  planOfflineExtraction([{ id: 'm1', role: 'user', content: text, at: new Date('2026-03-01T10:00:00Z') } as ConversationMessage], { timezone: 'UTC', segmenter: jiebaSegmenter }).candidates.map((c) => c.type);

describe('small talk (#23)', () => {
  it.each(['hey there!', 'lol nothing, just asking', 'Thanks so much, got it!', 'ok cool, talk later', '哈哈没什么，就随便问问。', '好的好的，谢谢', '你好呀，在吗？'])('"%s" is small talk', (t) => {
    expect(isSmallTalk(t, /\p{Script=Han}/u.test(t) ? 'zh' : 'en')).toBe(true);
  });
  it.each(["Thanks! I'm allergic to peanuts.", 'hi, my printer keeps jamming', '好的，我对花生过敏', 'I was just asking about the Python job', '没事，就是最近老失眠'])('"%s" is not', (t) => {
    expect(isSmallTalk(t, /\p{Script=Han}/u.test(t) ? 'zh' : 'en')).toBe(false);
  });
  it('an exchange whose user line is small talk, or a memory that is, stays out of the context', () => {
    const line = (content: string) => ({ conversationId: 'c', messageId: 'm', seq: 1, role: 'user' as const, content, at: new Date() });
    expect(isFillerExchange({ user: line('lol nothing, just asking'), assistant: line('Sure, here whenever you need me.') })).toBe(true);
    expect(isFillerExchange({ user: line('my VPN drops every afternoon'), assistant: line('ok') })).toBe(false);
    expect(withoutFiller(['haha ok thanks', '我对花生过敏'], (s) => s)).toEqual(['我对花生过敏']);
  });
});

describe('requests to the assistant are not pain points (#23)', () => {
  it.each(['明天下午三点提醒我给妈妈打电话。', '下周一提醒我续签护照', 'Remind me to renew the car insurance on Friday.', 'Could you book a taxi for 7am', '帮我查一下去机场的路线'])('"%s" is a request and no pain point', (t) => {
    expect(isRequestToAssistant(t, /\p{Script=Han}/u.test(t) ? 'zh' : 'en')).toBe(true);
    expect(types(t)).not.toContain('pain_point');
  });
  it('a standing directive is not an errand', () => {
    expect(isRequestToAssistant('Always answer in English from now on', 'en')).toBe(false);
    expect(isRequestToAssistant('以后回答都用中文', 'zh')).toBe(false);
  });
});

describe('a plain failure report is a pain point (#23)', () => {
  it.each(['the checkout page keeps timing out', '打印机一直卡纸', 'The office Wi-Fi drops every hour.', '公司邮箱老是登不上', 'My build fails on every second run', '小区的门禁卡刷了没反应'])('"%s"', (t) => {
    expect(isFailureReport(t, /\p{Script=Han}/u.test(t) ? 'zh' : 'en')).toBe(true);
    expect(types(t)).toContain('pain_point');
  });
  it.each(['I hope the demo does not crash tomorrow', '万一服务器宕机怎么办', 'Remind me to check why the backup failed', '他家的网络总是断线', 'My sister says her laptop crashed']) ('"%s" is not the user\'s failure report', (t) => {
    expect(types(t)).not.toContain('pain_point');
  });
});
