import { describe, expect, it } from 'vitest';
import { isHypothetical } from '../../../src/core/extraction/hypotheticals';

// Written for this test (not taken from test/fixtures/extraction-guards).
const lang = (s: string) => (/\p{Script=Han}/u.test(s) ? 'zh' : 'en');

describe('a bare 如果 / 要是, or an "if" about one coming day', () => {
  it('is imagined when the sentence guesses, wishes, comes to have what the user has not, or names one coming day; a report otherwise', () => {
    for (const s of [
      '如果明天下雨我就不去了',
      '要是下周不加班，我大概会去看个展',
      '如果我买了辆车，周末就能去郊区',
      '要是中了彩票我就环游世界',
      '要是我会弹钢琴就好了',
      '如果将来有机会，我想去冰岛住一年',
      "If it rains tomorrow I'm not going",
      "If I ever get a dog I'll name it Toast",
      'if we move to the coast someday, I want a boat',
    ]) {
      expect(isHypothetical(s, lang(s)), s).toBe(true);
    }
    // A habit, an outcome the user is sure of, or a bodily reaction stays a report.
    for (const s of [
      '如果周末不加班，我就去爬山',
      '如果有空我会去跑步',
      '要是熬夜，第二天我肯定头疼',
      '如果明天吃了虾，我肯定又起疹子',
      'If I have coffee after 3pm I can\'t sleep',
      'If I skip breakfast I get grumpy by ten',
    ]) {
      expect(isHypothetical(s, lang(s)), s).toBe(false);
    }
  });
});
