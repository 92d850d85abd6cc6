import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../../../src/adapters/text/jieba';
import { decide, type Neighbour } from '../../../src/core/decisions/decide';
import { screenCandidates } from '../../../src/core/extraction/provenance';
import { extractCandidatesOffline } from '../../../src/core/extraction/offline-extractor';
import { detectResolution } from '../../../src/core/extraction/resolution';
import type { ConversationMessage, MemoryCandidate } from '../../../src/core/types';

interface Labelled {
  text: string;
  lang: 'zh' | 'en';
  resolves: boolean;
  /** `probe2`: written after the rules, never tuned on (docs/extraction.md reports it). */
  split: 'tune' | 'heldout' | 'probe2';
}

const SET = fileURLToPath(new URL('../../fixtures/extraction-resolution/statements.jsonl', import.meta.url));
const rows: Labelled[] = readFileSync(SET, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Labelled);
const AT = new Date('2026-07-01T10:00:00Z');

/** The product path: the offline rules over one user message, then the provenance screen. */
function extract(text: string): MemoryCandidate[] {
  const message = { id: 'm1', role: 'user', content: text, at: AT } as ConversationMessage;
  return screenCandidates(extractCandidatesOffline([message], { segmenter: jiebaSegmenter }), [message], jiebaSegmenter).accepted;
}

function score(split: Labelled['split'], lang?: Labelled['lang']) {
  let tp = 0, fp = 0, fn = 0;
  for (const r of rows.filter((x) => x.split === split && (!lang || x.lang === lang))) {
    const got = extract(r.text).some((c) => c.intent === 'resolve');
    if (got && r.resolves) tp++;
    else if (got) fp++;
    else if (r.resolves) fn++;
  }
  return { tp, fp, fn, precision: tp / Math.max(1, tp + fp), recall: tp / Math.max(1, tp + fn) };
}

describe('resolution statements (labelled set)', () => {
  it('has both labels in both languages in both splits', () => {
    for (const split of ['tune', 'heldout'] as const) for (const lang of ['zh', 'en'] as const) for (const resolves of [true, false]) {
      expect(rows.filter((r) => r.split === split && r.lang === lang && r.resolves === resolves).length).toBeGreaterThanOrEqual(10);
    }
  });

  // docs/extraction.md reports the numbers; the floors sit under them.
  it('is recognised through the extraction rules on the held-out split', () => {
    const s = score('heldout');
    expect(s.precision).toBeGreaterThanOrEqual(0.95);
    expect(s.recall).toBeGreaterThanOrEqual(0.9);
  });

  it('on the tune split too', () => {
    const s = score('tune');
    expect(s.precision).toBeGreaterThanOrEqual(0.95);
    expect(s.recall).toBeGreaterThanOrEqual(0.9);
  });

  // Recall on wordings written after the rules is low (docs/extraction.md); what must hold is
  // that nothing there is read as a resolution that is not one: a false one closes a live problem.
  it('reads no false resolution among wordings written after the rules', () => {
    expect(score('probe2').fp).toBe(0);
  });

  it('never turns a recovered symptom into a new pain point', () => {
    for (const text of ['膝盖已经不疼了', '肚子不疼了', "my knee doesn't hurt anymore", 'the app no longer crashes']) {
      const out = extract(text);
      expect(out.some((c) => c.type === 'pain_point'), text).toBe(false);
      expect(out.some((c) => c.intent === 'resolve'), text).toBe(true);
    }
  });
});

describe('one message, one problem ended per thing it names', () => {
  it('counts a resolution said twice without a name once, and not beside a named one', () => {
    expect(extract('I fixed it, it works now').filter((c) => c.intent === 'resolve')).toHaveLength(1);
    const named = extract('打印机修好了，现在能用了').filter((c) => c.intent === 'resolve');
    expect(named.map((c) => c.subject)).toEqual(['打印机']);
  });
});

describe('detectResolution', () => {
  const zh = (t: string) => detectResolution(t, 'zh', jiebaSegmenter);
  const en = (t: string) => detectResolution(t, 'en', jiebaSegmenter);

  it('names the thing that was fixed, or the symptom that stopped', () => {
    expect(zh('打印机修好了')?.subject).toBe('打印机');
    expect(zh('不疼了')?.subject).toBe('疼');
    expect(zh('车修好了')?.subject).toBe('车');
    expect(en('the printer works again')?.subject).toBe('printer');
    expect(en("I don't get migraines anymore")?.subject).toBe('migraines');
  });

  it('keeps no subject when the statement names nothing', () => {
    for (const t of ['修好了', '问题解决了', '那个问题已经没有了']) expect(zh(t)?.subject, t).toBe('');
    for (const t of ['it works now', 'I fixed it', 'problem solved', "it's all fixed now"]) expect(en(t)?.subject, t).toBe('');
  });

  it('does not read breakage, questions, negations or someone else’s recovery as a resolution', () => {
    for (const t of ['灯不亮了', '电脑不行了', '还没修好', '修好了吗', '好了，开始吧', '我同事的电脑修好了', '我不再吃素了', '我已经不过敏了']) expect(zh(t), t).toBeNull();
    for (const t of ['the wifi stopped working', "my laptop doesn't turn on anymore", "it still isn't fixed", 'is it fixed yet?', "my sister's cold is gone", "the fix didn't work", 'I no longer eat meat']) expect(en(t), t).toBeNull();
  });
});

describe('decide: a resolution supersedes the open pain point it ends', () => {
  const candidate = (over: Partial<MemoryCandidate> = {}): MemoryCandidate => ({
    text: '打印机修好了', type: 'fact', confidence: 0.85, importance: 0.55, keywords: [], entities: [], relations: [], scope: 'global',
    emotionTags: [], messageIds: ['m'], role: 'user', saidAt: AT, intent: 'resolve', subject: '打印机', ...over,
  });
  const neighbour = (id: string, text: string, type: MemoryCandidate['type'], day: number, mentionsSubject = false): Neighbour => ({
    memory: { id, text, type, scope: 'global', source: { role: 'user', messageIds: [] }, createdAt: new Date(Date.UTC(2026, 5, day)) },
    vectorSimilarity: 0, lexicalOverlap: 0, sameNormalizedFact: false, mentionsSubject,
  });
  const printer = neighbour('p', '我的打印机老是卡纸', 'pain_point', 1, true);
  const knee = neighbour('k', '我膝盖老是疼', 'pain_point', 5);
  const owns = neighbour('f', '我有一台惠普打印机', 'fact', 1, true);

  it('by the thing it names, leaving other problems and the facts about the thing alone', () => {
    const d = decide(candidate(), [printer, knee]);
    expect(d).toMatchObject({ action: 'supersede', targetIds: ['p'] });
    expect(d.reason).toMatch(/over/);
  });

  it('the most recent open problem when it names nothing', () => {
    expect(decide(candidate({ text: '修好了', subject: undefined }), [printer, knee, owns])).toMatchObject({ action: 'supersede', targetIds: ['k'] });
  });

  it('is ignored when it names nothing and nothing is open', () => {
    expect(decide(candidate({ text: 'it works now', subject: undefined }), [owns]).action).toBe('ignore');
  });

  it('changes a fact like an update when no open problem matches', () => {
    expect(decide(candidate({ text: '我的过敏好了', subject: '过敏' }), [neighbour('a', '我对花生过敏', 'fact', 1, true)])).toMatchObject({ action: 'supersede', targetIds: ['a'] });
  });
});
