import { describe, expect, it } from 'vitest';
import { buildEpisodes, localDay, MAX_SUMMARY_CODE_POINTS, summarizeEpisode } from '../../../src/core/episodes/summarize';
import type { ConversationMessage } from '../../../src/core/types';
import { jiebaSegmenter } from '../../../src/adapters/text/jieba';

const at = (iso: string, plusMinutes = 0) => new Date(new Date(iso).getTime() + plusMinutes * 60_000);
let n = 0;
const msg = (role: 'user' | 'assistant', content: string, when: Date): ConversationMessage => ({ id: `m${++n}`, role, content, at: when });

describe('summarizeEpisode', () => {
  it("keeps the assistant's concrete recommendation and drops the small talk around it", () => {
    const t = at('2026-08-03T21:00:00+08:00');
    const messages = [
      msg('user', '最近想读点科幻小说，有推荐吗？', t),
      msg('assistant', '可以试试刘慈欣的《三体》三部曲，还有他的《球状闪电》，想象力都很惊人。', t),
      msg('user', '好，我这周就去买来看看。', t),
      msg('assistant', '祝你读得开心！', t),
    ];
    const { summary, summaryMessageIds } = summarizeEpisode(messages, jiebaSegmenter);
    expect(summary).toContain('三体');
    expect(summary).toContain('球状闪电');
    expect(summary).not.toContain('祝你读得开心');
    expect(summaryMessageIds[0]).toBe(messages[1]!.id);
  });

  it('keeps sentences with places, names and numbers, in the order they were said', () => {
    const t = at('2026-06-02T19:00:00+08:00');
    const messages = [
      msg('user', '哈哈，今天好累。', t),
      msg('user', '下午去了植物园，郁金香开得正好。', t),
      msg('user', 'Later we tried a Georgian place called Chito on Main Street.', t),
      msg('assistant', '听起来很美！', t),
    ];
    const { summary } = summarizeEpisode(messages, jiebaSegmenter);
    expect(summary).toContain('植物园');
    expect(summary).toContain('Chito');
    expect(summary.indexOf('植物园')).toBeLessThan(summary.indexOf('Chito'));
    expect(summary).not.toContain('听起来很美');
  });

  it('falls back to the first thing the user talked about when nothing is concrete', () => {
    const t = at('2026-09-08T19:30:00Z');
    const messages = [msg('user', 'Made mushroom risotto tonight, turned out creamy!', t), msg('assistant', 'Nice work, risotto takes patience.', t)];
    expect(summarizeEpisode(messages, jiebaSegmenter).summary).toContain('risotto');
  });

  it('gives an empty summary for pure chit-chat', () => {
    const t = at('2026-06-01T10:00:00Z');
    expect(summarizeEpisode([msg('user', 'hi', t), msg('assistant', 'Hello! How can I help?', t), msg('user', 'lol ok', t)], jiebaSegmenter).summary).toBe('');
  });

  it('stays within the size limit for a long day', () => {
    const t = at('2026-06-01T10:00:00Z');
    const messages = Array.from({ length: 40 }, (_, i) => msg('user', `第${i + 1}站去了杭州西湖边的第${i + 1}家咖啡馆，点了一杯拿铁。`, t));
    expect(Array.from(summarizeEpisode(messages, jiebaSegmenter).summary).length).toBeLessThanOrEqual(MAX_SUMMARY_CODE_POINTS);
  });
});

describe('buildEpisodes', () => {
  it('cuts a conversation at local midnight into one episode per day', () => {
    const messages = [
      msg('user', '晚上去了鼓浪屿，吃了沙茶面。', at('2026-05-20T23:30:00+08:00')),
      msg('assistant', '听起来不错。', at('2026-05-20T23:31:00+08:00')),
      msg('user', '凌晨又去看了日出，在日光岩。', at('2026-05-21T00:20:00+08:00')),
    ];
    const shanghai = buildEpisodes(messages, { timeZone: 'Asia/Shanghai', segmenter: jiebaSegmenter });
    expect(shanghai.map((e) => e.day)).toEqual(['2026-05-20', '2026-05-21']);
    expect(shanghai[0]!.messageIds).toEqual([messages[0]!.id, messages[1]!.id]);
    expect(shanghai[0]!.startedAt).toEqual(messages[0]!.at);
    expect(shanghai[0]!.endedAt).toEqual(messages[1]!.at);
    expect(shanghai[1]!.summary).toContain('日光岩');
    // The same instants are one UTC day.
    expect(buildEpisodes(messages, { timeZone: 'UTC', segmenter: jiebaSegmenter }).map((e) => e.day)).toEqual(['2026-05-20']);
  });

  it('leaves out messages the user asked to forget', () => {
    const t = at('2026-01-10T10:00:00Z');
    const secret = msg('user', 'I have type 2 diabetes, keep that in mind.', t);
    const other = msg('user', 'We visited the Louvre in Paris today.', t);
    const [episode] = buildEpisodes([secret, other], { timeZone: 'UTC', hidden: new Set([secret.id]), segmenter: jiebaSegmenter });
    expect(episode!.messageIds).toEqual([other.id]);
    expect(episode!.summary).not.toContain('diabetes');
    expect(episode!.summary).toContain('Louvre');
  });

  it('rejects an unknown zone', () => {
    expect(() => localDay(new Date(), 'Mars/Olympus')).toThrow(RangeError);
  });
});
