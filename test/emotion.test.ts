import { describe, it, expect } from 'vitest';
import { EMOTION_KEYWORDS, emotionScore } from '../src/core/emotion';

describe('EMOTION_KEYWORDS', () => {
  it('holds the checklist weights (M.1.2)', () => {
    expect(EMOTION_KEYWORDS['急']).toBe(1.0);
    expect(EMOTION_KEYWORDS['很重要']).toBe(0.9);
    expect(EMOTION_KEYWORDS['困扰']).toBe(0.8);
    expect(EMOTION_KEYWORDS['担心']).toBe(0.7);
    expect(EMOTION_KEYWORDS['想解决']).toBe(0.6);
    expect(EMOTION_KEYWORDS['无所谓']).toBe(0.1);
  });

  it('has English equivalents and extra Chinese keys', () => {
    expect(EMOTION_KEYWORDS['紧急']).toBe(1.0);
    expect(EMOTION_KEYWORDS['着急']).toBe(1.0);
    expect(EMOTION_KEYWORDS['重要']).toBe(0.8);
    expect(EMOTION_KEYWORDS['urgent']).toBe(1.0);
    expect(EMOTION_KEYWORDS['asap']).toBe(1.0);
    expect(EMOTION_KEYWORDS['very important']).toBe(0.9);
    expect(EMOTION_KEYWORDS['really important']).toBe(0.9);
    expect(EMOTION_KEYWORDS['bothers me']).toBe(0.8);
    expect(EMOTION_KEYWORDS['frustrat*']).toBe(0.8);
    expect(EMOTION_KEYWORDS['worried']).toBe(0.7);
    expect(EMOTION_KEYWORDS['want to fix']).toBe(0.6);
    expect(EMOTION_KEYWORDS["don't care"]).toBe(0.1);
    expect(EMOTION_KEYWORDS['whatever']).toBe(0.1);
  });

  it('keeps every weight within [0, 1] and is frozen', () => {
    for (const w of Object.values(EMOTION_KEYWORDS)) {
      expect(w).toBeGreaterThanOrEqual(0);
      expect(w).toBeLessThanOrEqual(1);
    }
    expect(Object.isFrozen(EMOTION_KEYWORDS)).toBe(true);
  });
});

describe('emotionScore', () => {
  it.each([
    ['这个bug真的很急', 1.0, '急'],
    ['线上事故，紧急处理一下', 1.0, '紧急'],
    ['我有点着急', 1.0, '着急'],
    ['这件事很重要', 0.9, '很重要'],
    ['这个接口比较重要', 0.8, '重要'],
    ['最困扰我的是内存泄漏', 0.8, '困扰'],
    ['我担心赶不上', 0.7, '担心'],
    ['我想解决这个性能问题', 0.6, '想解决'],
    ['吃什么都无所谓', 0.1, '无所谓'],
    ['This is urgent', 1.0, 'urgent'],
    ['please fix it ASAP', 1.0, 'asap'],
    ["It's really important to me", 0.9, 'really important'],
    ['the flaky tests are so frustrating', 0.8, 'frustrat'],
    ['it bothers me a lot', 0.8, 'bothers me'],
    ["I'm worried about the deadline", 0.7, 'worried'],
    ['I want to fix the login bug', 0.6, 'want to fix'],
    ["honestly I don't care", 0.1, "don't care"],
    ['whatever works', 0.1, 'whatever'],
  ])('%s → %d (%s)', (text, score, tag) => {
    const r = emotionScore(text);
    expect(r.score).toBe(score);
    expect(r.tags).toContain(tag);
  });

  it('returns 0 and no tags when nothing matches', () => {
    expect(emotionScore('我喜欢蓝色')).toEqual({ score: 0, tags: [] });
    expect(emotionScore('I live in Berlin')).toEqual({ score: 0, tags: [] });
    expect(emotionScore('')).toEqual({ score: 0, tags: [] });
  });

  it('takes the maximum weight and lists every matched keyword in order', () => {
    const r = emotionScore('我特别担心写不完，这件事很重要，真的很急');
    expect(r.score).toBe(1.0);
    expect(r.tags).toEqual(['担心', '很重要', '急']);
  });

  it('prefers the longer overlapping keyword', () => {
    expect(emotionScore('这很重要').tags).toEqual(['很重要']);
    expect(emotionScore('really important').tags).toEqual(['really important']);
  });

  it('treats negated or indifferent forms as low, not high', () => {
    expect(emotionScore('这个不急，慢慢来').score).toBe(0.2);
    expect(emotionScore('不是很急').score).toBe(0);
    expect(emotionScore('这个不重要').score).toBe(0.1);
    expect(emotionScore('我并不担心').score).toBe(0.2);
    expect(emotionScore('我并不太担心').score).toBe(0);
    expect(emotionScore('it is not important').score).toBe(0.1);
    expect(emotionScore("I'm not worried at all").score).toBe(0);
    expect(emotionScore('no rush on this one').score).toBe(0.2);
  });

  it('matches English whole words only, case-insensitively', () => {
    expect(emotionScore('URGENT: server down').score).toBe(1.0);
    expect(emotionScore('the importance of tests').score).toBe(0);
    expect(emotionScore('Frustrated with CI').tags).toEqual(['frustrat']);
  });

  it('does not mistake 特别 for a negator', () => {
    expect(emotionScore('我特别担心').score).toBe(0.7);
  });

  it('does not read polite 麻烦 as annoyance', () => {
    expect(emotionScore('麻烦你帮我看一下').score).toBe(0);
  });
});
