import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../../../src/adapters/text/jieba';
import { detectFollowUp, followUpByMeaning, followUpPrototypeIndex, isOpenPainPoint, latestOpenPainPoint, netMayJudge, type PainPointLike } from '../../../src/core/recall/follow-up';
import { FOLLOW_UP_PROTOTYPES, type FollowUpPrototype } from '../../../src/core/recall/follow-up-prototypes';

interface Labelled {
  text: string;
  lang: 'zh' | 'en';
  referBack: boolean;
  split: 'dev' | 'heldout';
}

const SET = fileURLToPath(new URL('../../fixtures/recall-followup/queries.jsonl', import.meta.url));
const rows: Labelled[] = readFileSync(SET, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Labelled);

function score(split: Labelled['split'], lang?: Labelled['lang']) {
  let tp = 0, fp = 0, fn = 0, tn = 0;
  for (const r of rows.filter((x) => x.split === split && (!lang || x.lang === lang))) {
    const got = detectFollowUp(r.text, jiebaSegmenter).referBack;
    if (got && r.referBack) tp++;
    else if (got) fp++;
    else if (r.referBack) fn++;
    else tn++;
  }
  return { tp, fp, fn, tn, precision: tp / Math.max(1, tp + fp), recall: tp / Math.max(1, tp + fn) };
}

describe('detectFollowUp', () => {
  it('has a labelled set of many zh and en wordings, split before tuning', () => {
    for (const lang of ['zh', 'en'] as const) for (const split of ['dev', 'heldout'] as const) for (const referBack of [true, false]) {
      expect(rows.filter((r) => r.lang === lang && r.split === split && r.referBack === referBack).length).toBeGreaterThanOrEqual(12);
    }
  });

  it('has at least 200 labelled queries, both splits holding both labels in both languages', () => {
    expect(rows.length).toBeGreaterThanOrEqual(200);
    expect(new Set(rows.map((r) => r.text)).size).toBe(rows.length);
  });

  // The word rules are the precise path: on wordings they were not written for they miss (the e5
  // net catches those; `npm run bench -- followup` measures both), but they never fire wrongly.
  it('is precise on both splits (the net adds recall)', () => {
    for (const split of ['dev', 'heldout'] as const) {
      const s = score(split);
      expect(s.precision, split).toBe(1);
      expect(s.recall, split).toBeGreaterThanOrEqual(0.6);
    }
  });

  it('does not fire on a query that names the thing, even with a recurrence word', () => {
    for (const q of ['payment-svc 还是超时', '打印机又卡纸了', 'the wifi at home is still slow', 'my back pain is back']) {
      const v = detectFollowUp(q, jiebaSegmenter);
      expect(v.referBack, q).toBe(false);
      expect(v.content.length, q).toBeGreaterThan(0);
    }
  });

  it('needs a cue: small talk and bare pronouns are not refer-backs', () => {
    for (const q of ['好的', 'got it', 'hi', '你好', '这个呢？']) expect(detectFollowUp(q, jiebaSegmenter).referBack, q).toBe(false);
    expect(detectFollowUp('', jiebaSegmenter).referBack).toBe(false);
  });

  it('does not take a long message for a follow-up', () => {
    expect(detectFollowUp('还是不行，'.repeat(6), jiebaSegmenter).referBack).toBe(false);
    expect(detectFollowUp('it is still not working again and again and again and again', jiebaSegmenter).referBack).toBe(false);
  });
});

describe('the follow-up net (fixed vectors)', () => {
  // Axis 0: refer-back meaning; the others: the negative classes.
  const protos: FollowUpPrototype[] = [
    { text: 'r1', cls: 'refer_back' }, { text: 'r2', cls: 'refer_back' },
    { text: 'n1', cls: 'names_thing' }, { text: 'q1', cls: 'new_question' }, { text: 's1', cls: 'small_talk' },
  ];
  const index = followUpPrototypeIndex(protos, [[1, 0, 0, 0], [0.98, 0.2, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]);
  const t = { k: 2, margin: 0.03, floor: 0.86 };

  it('accepts a query near the refer-back prototypes and clear of every other class', () => {
    const v = followUpByMeaning([1, 0.05, 0, 0], index, t);
    expect(v.referBack).toBe(true);
    expect(v.against.cls).toBe('names_thing');
  });

  it('rejects a query nearer a negative class, or too far from everything', () => {
    expect(followUpByMeaning([0.6, 0.8, 0, 0], index, t).referBack).toBe(false);
    expect(followUpByMeaning([0.5, 0, 0.5, 0.5], index, t).referBack).toBe(false);
  });

  it('needs as many vectors as prototypes', () => {
    expect(() => followUpPrototypeIndex(protos, [[1, 0]])).toThrow(/prototypes/);
  });

  it('only judges turns of conversation, not long requests', () => {
    expect(netMayJudge('那事儿后来怎么样了')).toBe(true);
    expect(netMayJudge("your fix didn't work")).toBe(true);
    expect(netMayJudge('')).toBe(false);
    expect(netMayJudge('帮我把上周写的那份关于数据库迁移的方案再仔细检查一遍，看看有没有遗漏')).toBe(false);
    expect(netMayJudge('please go over the migration plan I wrote last week and check every step for gaps')).toBe(false);
  });

  it('has prototypes for every class, none of them a labelled query', () => {
    const texts = new Set(rows.map((r) => r.text.toLowerCase()));
    for (const cls of ['refer_back', 'names_thing', 'new_question', 'small_talk', 'statement'] as const) expect(FOLLOW_UP_PROTOTYPES.some((p) => p.cls === cls)).toBe(true);
    expect(FOLLOW_UP_PROTOTYPES.filter((p) => texts.has(p.text.toLowerCase()))).toEqual([]);
  });
});

describe('open pain points', () => {
  const now = new Date('2026-07-01T00:00:00Z');
  const pp = (id: string, day: number, over: Partial<PainPointLike> = {}): PainPointLike => ({
    id, type: 'pain_point', status: 'active', supersededBy: null, expiresAt: null, metadata: {}, createdAt: new Date(Date.UTC(2026, 5, day)), ...over,
  });

  it('is open while active, unexpired, not superseded and not marked resolved', () => {
    expect(isOpenPainPoint(pp('a', 1), now)).toBe(true);
    expect(isOpenPainPoint(pp('a', 1, { status: 'superseded' }), now)).toBe(false);
    expect(isOpenPainPoint(pp('a', 1, { supersededBy: 'b' }), now)).toBe(false);
    expect(isOpenPainPoint(pp('a', 1, { expiresAt: new Date('2026-06-30T00:00:00Z') }), now)).toBe(false);
    expect(isOpenPainPoint(pp('a', 1, { metadata: { resolved: true } }), now)).toBe(false);
    expect(isOpenPainPoint(pp('a', 1, { metadata: { resolvedAt: '2026-06-20T00:00:00Z' } }), now)).toBe(false);
    expect(isOpenPainPoint(pp('a', 1, { type: 'goal' }), now)).toBe(false);
  });

  it('takes the one raised last among the open ones', () => {
    const older = pp('older', 1);
    const resolvedNewest = pp('resolved', 20, { metadata: { resolved: true } });
    const latest = pp('latest', 10);
    expect(latestOpenPainPoint([older, resolvedNewest, latest], now)?.id).toBe('latest');
    expect(latestOpenPainPoint([resolvedNewest], now)).toBeUndefined();
  });
});
