import { describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../src/adapters/text/jieba';
import { imaginedSentences, isHypothetical } from '../src/core/extraction/hypotheticals';
import { planOfflineExtraction } from '../src/core/extraction/offline-extractor';
import type { ConversationMessage } from '../src/core/types';
import { guardTable, judgeGuardLine, keptCandidates, loadGuardSplit, type GuardVerdict } from './support/guard-eval';

async function rulesOnly(split: 'tune' | 'holdout'): Promise<GuardVerdict[]> {
  const out: GuardVerdict[] = [];
  for (const line of loadGuardSplit(split)) out.push(judgeGuardLine(line, await keptCandidates(line)));
  return out;
}

function rate(verdicts: GuardVerdict[], kind: string): number {
  const row = guardTable(verdicts).find((r) => r.kind === kind)!;
  return row.passed / row.total;
}

describe('hypotheticals', () => {
  it('reads the unreal as imagined and a real conditional as a report', () => {
    for (const s of ['If I had a cat I would name it Miso', "if we lived closer I'd visit every week", 'Imagine me running a bakery', '假如我会说法语，我就去巴黎工作', '万一我被裁了，我就回老家', '要是哪天我发财了，先买个大房子', '如果我是你，我会先睡一觉', '早知道我就学医了']) {
      expect(isHypothetical(s, /[a-z]/iu.test(s[0]!) ? 'en' : 'zh'), s).toBe(true);
    }
    for (const s of ['If I eat peanuts I could die', '万一吃到花生我会休克', "if I ate shellfish I'd end up in the ER", '有一天我在地铁上手机被偷了', '想象力是我的强项', 'If I drink milk I get a stomach ache', 'If I forget my keys again, could you remind me?', 'When I run I like to listen to podcasts', "I'd like my coffee black", '如果吃了花生，我就会起疹子', '要是熬夜，第二天我肯定头疼', '每次下雨我膝盖都疼']) {
      expect(isHypothetical(s, /[a-z]/iu.test(s[0]!) ? 'en' : 'zh'), s).toBe(false);
    }
    // A sentence that goes on imagining right after one is imagined too; a plain taste is not.
    expect(imaginedSentences([{ text: 'Imagine I lived in Tokyo.' }, { text: "I'd probably never leave." }], 'en')).toEqual([true, true]);
    expect(imaginedSentences([{ text: 'Imagine I lived in Tokyo.' }, { text: "I'd like tea." }], 'en')).toEqual([true, false]);
    expect(imaginedSentences([{ text: 'I live in Osaka.' }, { text: "I'd probably never leave." }], 'en')).toEqual([false, false]);
  });
});

describe("the user's own habits and resolutions are not instructions", () => {
  const types = (content: string) => planOfflineExtraction([{ id: 'm1', role: 'user', content, at: new Date('2026-03-02T10:00:00Z') } as ConversationMessage], { timezone: 'UTC', segmenter: jiebaSegmenter }).candidates.map((c) => c.type);
  it("keeps orders to the assistant and leaves the user's life alone", () => {
    for (const s of ['每次我下班的时候，就给我妈打个电话', '以后少吃外卖', '以后多运动', '下次我早点出门']) expect(types(s), s).not.toContain('instruction');
    for (const s of ['以后少用emoji', '每次我发代码的时候，请先指出bug', '要是我问菜谱，你就用克做单位']) expect(types(s), s).toContain('instruction');
  });
});

// The set's pass rates for what the rules decide alone (the net needs the e5 server: `npm run
// bench -- extract-guards` runs the product path). Floors a little under today's, on both splits.
describe('the guard set, rules alone', () => {
  it.each(['tune', 'holdout'] as const)('%s: hypotheticals, complaints and other people stay out; conditional and standing instructions are kept', async (split) => {
    const verdicts = await rulesOnly(split);
    expect(rate(verdicts, 'hypothetical')).toBeGreaterThanOrEqual(0.9);
    expect(rate(verdicts, 'recurring-complaint')).toBeGreaterThanOrEqual(0.9);
    expect(rate(verdicts, 'third-party')).toBeGreaterThanOrEqual(0.95);
    expect(rate(verdicts, 'conditional-instruction')).toBeGreaterThanOrEqual(0.5);
    expect(rate(verdicts, 'standing-instruction')).toBeGreaterThanOrEqual(0.55);
  });
});
