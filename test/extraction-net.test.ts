import { describe, expect, it } from 'vitest';
import { classScores, decideStatement, ExtractionNet, netCandidate, netConfidence, NET_CONFIDENCE, NET_THRESHOLDS, PrototypeIndex, type StatementEncoder, unit } from '../src/core/extraction/net';
import { isAboutSomeoneElse, isOneOffRequest, isQuestionLike, selectNetStatements, type NetStatement } from '../src/core/extraction/net-statements';
import { planOfflineExtraction } from '../src/core/extraction/offline-extractor';
import { NET_CLASS_TYPE, PROTOTYPES, type NetClass, type Prototype } from '../src/core/extraction/prototypes';
import { screenCandidates } from '../src/core/extraction/provenance';
import { detectLang, prepareText } from '../src/core/extraction/text';
import type { ConversationMessage } from '../src/core/types';
import { OfflineExtractor } from '../src/adapters/extraction/offline-extractor';
import { jiebaSegmenter } from '../src/adapters/text/jieba';
import { loadSplit, loadStatements } from './support/net-eval';

const AT = new Date('2026-03-01T10:00:00Z');
const user = (id: string, content: string): ConversationMessage => ({ id, role: 'user', content, at: AT }) as ConversationMessage;
const assistant = (id: string, content: string): ConversationMessage => ({ id, role: 'assistant', content, at: AT }) as ConversationMessage;

function statementsOf(content: string, covered: { start: number; end: number }[] = []): NetStatement[] {
  const prepared = prepareText(content).trim();
  return selectNetStatements(user('m1', content), prepared, detectLang(prepared), covered, jiebaSegmenter);
}

/** A tiny index in 3 dimensions: health along x, questions along y, small talk along z. */
function tinyIndex(): PrototypeIndex {
  const prototypes: Prototype[] = [
    { cls: 'fact.health', lang: 'en', text: 'h1' },
    { cls: 'fact.health', lang: 'en', text: 'h2' },
    { cls: 'none.question', lang: 'en', text: 'q1' },
    { cls: 'none.smalltalk', lang: 'en', text: 's1' },
  ];
  return new PrototypeIndex(prototypes, [
    [1, 0, 0],
    [0.9, 0.1, 0],
    [0, 1, 0],
    [0, 0, 1],
  ]);
}

describe('recall net: the pure decision over fixed vectors', () => {
  it('normalises vectors and scores each class by the mean of its k nearest exemplars', () => {
    expect([...unit([3, 4])]).toEqual([0.6, 0.8]);
    expect([...unit([0, 0])]).toEqual([0, 0]);
    const index = tinyIndex();
    const scores = classScores([2, 0, 0], index, 2);
    const h2 = 0.9 / Math.hypot(0.9, 0.1);
    expect(scores.get('fact.health')).toBeCloseTo((1 + h2) / 2, 6);
    expect(scores.get('none.question')).toBeCloseTo(0, 6);
    // k larger than a class uses what the class has.
    expect(classScores([0, 1, 0], index, 5).get('none.question')).toBeCloseTo(1, 6);
  });

  it('accepts a statement whose best durable class beats the best "not durable" class by the margin', () => {
    const verdict = decideStatement([1, 0.05, 0], tinyIndex(), { k: 1, margin: 0.05, floor: 0.5 });
    expect(verdict.cls).toBe('fact.health');
    expect(verdict.durable.cls).toBe('fact.health');
    expect(verdict.none.cls).toBe('none.question');
    expect(verdict.margin).toBeGreaterThan(0.05);
    expect(verdict.confidence).toBeGreaterThanOrEqual(NET_CONFIDENCE.min);
    expect(verdict.confidence).toBeLessThanOrEqual(NET_CONFIDENCE.max);
  });

  it('rejects a statement between a durable class and a "not durable" one (margin), and a far-off one (floor)', () => {
    const between = decideStatement([1, 1.2, 0], tinyIndex(), { k: 1, margin: 0.05, floor: 0.5 });
    expect(between.cls).toBeNull();
    expect(between.confidence).toBe(0);
    expect(Math.abs(between.margin)).toBeLessThan(0.05);
    // Closer to health than to anything else, but not close to health: the floor holds it back.
    const far = decideStatement([0.3, 0, -1], tinyIndex(), { k: 1, margin: 0, floor: 0.5 });
    expect(far.margin).toBeGreaterThan(0);
    expect(far.cls).toBeNull();
  });

  it('maps the margin to a confidence that rises with it and stays below every rule', () => {
    const t = { k: 3, margin: 0.01, floor: 0 };
    expect(netConfidence(0.01, t)).toBe(NET_CONFIDENCE.min);
    expect(netConfidence(0.025, t)).toBeGreaterThan(NET_CONFIDENCE.min);
    expect(netConfidence(1, t)).toBe(NET_CONFIDENCE.max);
    expect(NET_CONFIDENCE.max).toBeLessThan(0.75);
    expect(NET_CONFIDENCE.min).toBeGreaterThanOrEqual(0.7);
  });

  it('refuses an index without both kinds of class, and vectors that do not match the exemplars', () => {
    const only = new PrototypeIndex([{ cls: 'goal', lang: 'en', text: 'g' }], [[1, 0]]);
    expect(() => decideStatement([1, 0], only)).toThrow(/durable/);
    expect(() => new PrototypeIndex([{ cls: 'goal', lang: 'en', text: 'g' }], [])).toThrow(/vectors/);
  });

  it('ships exemplars for every class in both languages, none of them a sentence of the labelled set', () => {
    const classes = Object.keys(NET_CLASS_TYPE) as NetClass[];
    for (const cls of classes) {
      for (const lang of ['zh', 'en'] as const) expect(PROTOTYPES.filter((p) => p.cls === cls && p.lang === lang).length, `${cls}/${lang}`).toBeGreaterThanOrEqual(5);
    }
    const labelled = new Set(loadStatements().map((s) => s.text));
    expect(PROTOTYPES.filter((p) => labelled.has(p.text))).toEqual([]);
    expect(NET_THRESHOLDS.margin).toBeGreaterThan(0);
  });
});

/** Embeds by class: every exemplar is the unit vector of its class; statements are looked up. */
class ClassEncoder implements StatementEncoder {
  readonly classes = Object.keys(NET_CLASS_TYPE) as NetClass[];
  calls: string[][] = [];
  failNext = false;
  constructor(private readonly statements: Record<string, NetClass>) {}
  axis(cls: NetClass, weight = 1): number[] {
    return this.classes.map((c) => (c === cls ? weight : 0.05));
  }
  async encode(texts: readonly string[]): Promise<number[][]> {
    this.calls.push([...texts]);
    if (this.failNext) {
      this.failNext = false;
      throw new Error('embedder down');
    }
    const byText = new Map(PROTOTYPES.map((p) => [p.text, p.cls]));
    return texts.map((t) => this.axis(byText.get(t) ?? this.statements[t] ?? 'none.smalltalk'));
  }
}

describe('recall net: exemplars embedded once, statements classified', () => {
  it('embeds the exemplars once per instance and retries them after a failure', async () => {
    const encoder = new ClassEncoder({ 'Shellfish sends me to hospital': 'fact.health' });
    const net = new ExtractionNet(encoder);
    encoder.failNext = true;
    await expect(net.classify(['Shellfish sends me to hospital'])).rejects.toThrow(/embedder down/);
    const [first] = await net.classify(['Shellfish sends me to hospital']);
    const [again] = await net.classify(['Shellfish sends me to hospital']);
    expect(first!.cls).toBe('fact.health');
    expect(again!.cls).toBe('fact.health');
    const prototypeCalls = encoder.calls.filter((c) => c.length === PROTOTYPES.length);
    expect(prototypeCalls).toHaveLength(2); // the failed attempt, then one successful embedding for good
    expect(await net.classify([])).toEqual([]);
  });

  it('turns accepted statements into candidates below the rules, and keeps "not durable" ones out', async () => {
    const encoder = new ClassEncoder({ 'Shellfish sends me straight to hospital': 'fact.health', 'Sunny afternoons are lovely': 'none.general' });
    const net = new ExtractionNet(encoder);
    const statements = [...statementsOf('Shellfish sends me straight to hospital.'), ...statementsOf('Sunny afternoons are lovely.')];
    const candidates = await net.candidates(statements, 'UTC', jiebaSegmenter);
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({ text: 'Shellfish sends me straight to hospital', type: 'fact', scope: 'global', role: 'user', intent: 'assert', messageIds: ['m1'] });
    expect(candidates[0]!.confidence).toBeLessThan(0.75);
    expect(candidates[0]!.confidence).toBeGreaterThanOrEqual(0.7);
    expect(candidates[0]!.importance).toBeGreaterThanOrEqual(0.9);
  });
});

describe('recall net: candidates', () => {
  const accepted = (cls: NetClass) => ({ cls, durable: { cls, score: 0.9 }, none: { cls: 'none.smalltalk' as NetClass, score: 0.85 }, margin: 0.05, confidence: 0.74 });

  it('keeps an instruction the user did not word as one as a preference, so the provenance screen keeps it', () => {
    const [s] = statementsOf('Emojis in answers really annoy me.');
    const c = netCandidate(s!, accepted('instruction'), 'UTC', jiebaSegmenter)!;
    expect(c.type).toBe('preference');
    const [d] = statementsOf('Skip the emojis in your replies from now on.');
    expect(netCandidate(d!, accepted('instruction'), 'UTC', jiebaSegmenter)!.type).toBe('instruction');
    const messages = [user('m1', 'Emojis in answers really annoy me.')];
    expect(screenCandidates([c], messages, jiebaSegmenter).accepted).toHaveLength(1);
  });

  it('needs an English fact, taste or goal to name the user; Chinese may drop the subject', () => {
    const [general] = statementsOf('Olive oil is good for the heart.');
    expect(netCandidate(general!, accepted('fact.health'), 'UTC', jiebaSegmenter)).toBeNull();
    const [zh] = statementsOf('海鲜一口都不能碰，碰了就浑身起疹子。');
    expect(netCandidate(zh!, accepted('fact.health'), 'UTC', jiebaSegmenter)).toMatchObject({ type: 'fact', scope: 'global' });
  });

  it('lets a short-lived state expire like the rules do', () => {
    const [s] = statementsOf('Lately loud music gives me a headache.');
    expect(s!.shortLived).toBe(true);
    expect(netCandidate(s!, accepted('fact.health'), 'UTC', jiebaSegmenter)!.expiresAt).toBeInstanceOf(Date);
  });
});

describe('recall net: which statements it sees', () => {
  it.each([
    ['Is cold brew stronger than espresso?', 'en'],
    ['How long does sourdough take to rise', 'en'],
    ['Do you know a good bakery nearby', 'en'],
    ['有什么好吃的川菜推荐吗？', 'zh'],
    ['怎么才能早点睡着', 'zh'],
    ['这个和那个哪个好', 'zh'],
    ['排骨要炖多久呢', 'zh'],
  ] as const)('skips the question %s', (text, lang) => {
    expect(isQuestionLike(text, lang)).toBe(true);
    expect(statementsOf(text)).toEqual([]);
  });

  it.each([
    ['When I travel I always pack light.', 'en'],
    ['How I work: tests first, code second.', 'en'],
    ['我平时怎么舒服怎么来。', 'zh'],
  ] as const)('does not take the statement %s for a question', (text, lang) => {
    expect(isQuestionLike(text, lang)).toBe(false);
  });

  it.each([
    ['My uncle cannot stand onions.', 'en'],
    ['A colleague of mine gets migraines from bright light.', 'en'],
    ['Our landlord always texts at midnight.', 'en'],
    ['She never eats breakfast.', 'en'],
    ['我舅舅一吃洋葱就难受。', 'zh'],
    ['我们领导每天都喝三杯茶。', 'zh'],
    ['她从来不吃早饭。', 'zh'],
  ] as const)('skips %s: about someone else', (text, lang) => {
    expect(isAboutSomeoneElse(text, lang)).toBe(true);
    expect(statementsOf(text)).toEqual([]);
  });

  it.each([
    ['My doctor has me off caffeine for good.', 'en'],
    ['我医生让我以后别碰酒。', 'zh'],
  ] as const)('keeps %s: someone else, but about the user', (text, lang) => {
    expect(isAboutSomeoneElse(text, lang)).toBe(false);
  });

  it.each([
    ['Rewrite this paragraph so it sounds friendlier.', 'en'],
    ['Let us do the next draft as bullet points.', 'en'],
    ['For the deploy script, stick with Make.', 'en'],
    ['帮我把这段代码改成异步的。', 'zh'],
    ['这个小程序用 Flutter 做吧。', 'zh'],
  ] as const)('skips the one-off request %s', (text, lang) => {
    expect(isOneOffRequest(text, lang)).toBe(true);
    expect(statementsOf(text)).toEqual([]);
  });

  it('skips hedges, dismissals, fragments and quoted material, and keeps the statement before a question', () => {
    expect(statementsOf('Maybe onions bother my stomach, not sure.')).toEqual([]);
    expect(statementsOf('我可能对猕猴桃有点敏感。')).toEqual([]);
    expect(statementsOf('Never mind, that one does not matter.')).toEqual([]);
    expect(statementsOf('算了，这个先放着。')).toEqual([]);
    expect(statementsOf('ok then')).toEqual([]);
    expect(statementsOf('> Onions wreck my stomach.')).toEqual([]);
    expect(statementsOf('My boss wrote: "Onions wreck my stomach, every time."')).toEqual([]);
    expect(statementsOf('Onions wreck my stomach, what can I cook tonight?').map((s) => s.text)).toEqual(['Onions wreck my stomach']);
  });

  it('skips what the rules already turned into a candidate', () => {
    const content = 'I am allergic to kiwi. Onions wreck my stomach.';
    const plan = planOfflineExtraction([user('m1', content)], { segmenter: jiebaSegmenter });
    expect(plan.candidates.map((c) => c.text)).toEqual(['I am allergic to kiwi']);
    expect(plan.statements.map((s) => s.text)).toEqual(['Onions wreck my stomach']);
    // Offsets point into the prepared message.
    const s = plan.statements[0]!;
    expect(s.content.slice(s.start, s.end)).toBe(s.text);
    expect(planOfflineExtraction([user('m1', content)], { segmenter: jiebaSegmenter }, false).statements).toEqual([]);
  });
});

describe('OfflineExtractor with the recall net', () => {
  it('adds net candidates for what the rules left, screened like everything else, and reports them', async () => {
    const encoder = new ClassEncoder({ 'Onions wreck my stomach': 'fact.health', 'That was fun': 'none.smalltalk' });
    const extractor = new OfflineExtractor(new ExtractionNet(encoder));
    const messages = [user('m1', 'I am allergic to kiwi. Onions wreck my stomach.'), assistant('a1', 'Noted.'), user('m2', 'That was fun.')];
    const { candidates, report } = await extractor.extract({ messages, timezone: 'UTC' });
    expect(candidates.map((c) => [c.type, c.text, c.confidence >= 0.8 ? 'rule' : 'net'])).toEqual([
      ['fact', 'I am allergic to kiwi', 'rule'],
      ['fact', 'Onions wreck my stomach', 'net'],
    ]);
    expect(report).toMatchObject({ extractor: 'offline-rules', rejected: [], net: { statements: 2, proposed: 1 } });
  });

  it('fails the extraction when the embedder fails, so the activity retries instead of silently losing recall', async () => {
    const encoder = new ClassEncoder({});
    encoder.failNext = true;
    const extractor = new OfflineExtractor(new ExtractionNet(encoder));
    await expect(extractor.extract({ messages: [user('m1', 'Onions wreck my stomach.')], timezone: 'UTC' })).rejects.toThrow(/embedder down/);
  });

  it('without a net is the rules alone, and never calls an embedder for small talk', async () => {
    const encoder = new ClassEncoder({});
    const extractor = new OfflineExtractor(new ExtractionNet(encoder));
    const { candidates } = await extractor.extract({ messages: [user('m1', 'hi'), user('m2', 'thanks!')], timezone: 'UTC' });
    expect(candidates).toEqual([]);
    expect(encoder.calls).toEqual([]);
    const plain = await new OfflineExtractor().extract({ messages: [user('m1', 'Onions wreck my stomach.')], timezone: 'UTC' });
    expect(plain.candidates).toEqual([]);
    expect(plain.report.net).toBeUndefined();
  });
});

describe('the labelled statement set', () => {
  const rows = loadStatements();
  const split = loadSplit();

  it('holds at least 300 statements, about half Chinese and half English, in paraphrase families of 3 to 6', () => {
    expect(rows.length).toBeGreaterThanOrEqual(300);
    const zh = rows.filter((r) => r.lang === 'zh').length;
    expect(zh / rows.length).toBeGreaterThan(0.4);
    expect(zh / rows.length).toBeLessThan(0.6);
    const families = new Map<string, typeof rows>();
    for (const r of rows) families.set(r.family, [...(families.get(r.family) ?? []), r]);
    // Issue #23's rows: failure reports come in paraphrase pairs, requests and small talk one per
    // family (they are not paraphrases of each other; split.json stratifies them by sub-kind).
    const issue23 = new Set(['plain-failure', 'request-to-assistant', 'small-talk']);
    for (const [family, members] of families) {
      expect(members.length, family).toBeGreaterThanOrEqual(issue23.has(members[0]!.kind) ? 1 : 3);
      expect(members.length, family).toBeLessThanOrEqual(6);
      expect(new Set(members.map((m) => m.label)).size, family).toBe(1);
      expect(new Set(members.map((m) => m.lang)).size, family).toBe(1);
    }
    expect(new Set(rows.map((r) => r.text)).size).toBe(rows.length);
    for (const r of rows) expect(['fact', 'preference', 'goal', 'pain_point', 'instruction', 'none']).toContain(r.label);
    for (const kind of ['negation', 'hedge', 'habit', 'third-party', 'question', 'smalltalk', 'one-off']) expect(rows.some((r) => r.kind === kind), kind).toBe(true);
  });

  it('holds at least 60 issue #23 statements (plain failure reports, requests to the assistant, small talk), zh and en, on both sides of the split', () => {
    const issue23 = rows.filter((r) => ['plain-failure', 'request-to-assistant', 'small-talk'].includes(r.kind));
    expect(issue23.length).toBeGreaterThanOrEqual(60);
    for (const kind of ['plain-failure', 'request-to-assistant', 'small-talk'])
      for (const lang of ['zh', 'en'] as const)
        for (const side of [split.tune, split.holdout]) expect(issue23.some((r) => r.kind === kind && r.lang === lang && side.has(r.family)), `${kind}/${lang}`).toBe(true);
  });

  it('is split by family: every family in exactly one of tune and holdout', () => {
    const families = new Set(rows.map((r) => r.family));
    expect(new Set([...split.tune, ...split.holdout])).toEqual(families);
    expect([...split.tune].filter((f) => split.holdout.has(f))).toEqual([]);
    expect(split.holdout.size).toBeGreaterThanOrEqual(families.size / 3);
  });
});
