import { describe, expect, it } from 'vitest';
import { answersIn, checkDailyChat, loadDailyChat, type DailyUser } from '../bench/daily-chat-set';

describe('the bilingual daily-chat fixture', () => {
  const users = loadDailyChat();

  it('is well formed: evidence exists, every question has a kind, answer and split, users split balanced', () => {
    expect(checkDailyChat(users)).toEqual([]);
  });

  it('has three users or more per language, and both splits', () => {
    expect(users.filter((u) => u.lang === 'zh').length).toBeGreaterThanOrEqual(3);
    expect(users.filter((u) => u.lang === 'en').length).toBeGreaterThanOrEqual(3);
    expect(new Set(users.map((u) => u.split))).toEqual(new Set(['dev', 'held-out']));
  });

  // The checker itself must catch what it is there for, or the first test proves nothing.
  it('reports a missing evidence turn, a question without kind, an answer outside its evidence and an unbalanced split', () => {
    const broken: DailyUser[] = structuredClone(users);
    const u = broken[0]!;
    u.questions[0]!.evidence = ['no-such-turn'];
    (u.questions[1] as { kind: string }).kind = '';
    u.questions[2]!.answer = ['zzz-not-there'];
    broken[1]!.split = broken[1]!.split === 'dev' ? 'held-out' : 'dev';
    const problems = checkDailyChat(broken).join('\n');
    expect(problems).toContain(`${u.questions[0]!.id}: evidence no-such-turn`);
    expect(problems).toContain(`${u.questions[1]!.id}: kind`);
    expect(problems).toContain(`${u.questions[2]!.id}: answer zzz-not-there`);
    expect(problems).toMatch(/split (dev|held-out): .* \(balanced expected\)/u);
  });

  it('matches answer words after normalising case and punctuation, in Chinese and English', () => {
    expect(answersIn('Booked flights with TAP, May 16 to 23', ['tap', 'may 16'])).toBe(true);
    expect(answersIn('我对芒果过敏。', ['芒果'])).toBe(true);
    expect(answersIn('我对芒果过敏。', ['芒果', '花生'])).toBe(false);
  });
});
