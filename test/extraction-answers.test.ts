import { describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../src/adapters/text/jieba';
import { questionOf } from '../src/core/extraction/answers';
import { planOfflineExtraction } from '../src/core/extraction/offline-extractor';
import { screenCandidates } from '../src/core/extraction/provenance';
import type { ConversationMessage, MemoryCandidate } from '../src/core/types';
import { inlineRuleWork, pageCandidates, scanPage } from '../src/shared/rule-work';
import { loadAnswers, loadAnswerSplit, predictAnswer, scoreAnswers } from './extraction-answers-eval';

const AT = new Date('2026-03-01T10:00:00Z');

function turns(...pairs: [role: 'user' | 'assistant', content: string][]): ConversationMessage[] {
  return pairs.map(([role, content], i) => ({ id: `${role[0]}${i}`, role, content, at: new Date(AT.getTime() + i * 30_000) }));
}

/** What survives the rules and the provenance screen for the last (user) turn. */
function kept(messages: ConversationMessage[]): MemoryCandidate[] {
  const plan = planOfflineExtraction(messages, { timezone: 'UTC', segmenter: jiebaSegmenter }, false);
  const last = messages.at(-1)!.id;
  return screenCandidates(plan.candidates, messages, jiebaSegmenter).accepted.filter((c) => c.role === 'user' && c.messageIds.includes(last) && c.confidence >= 0.7);
}

describe('a short answer to the assistant question (#23)', () => {
  it('keeps the value with the question predicate, cited to the user message only', () => {
    const [c, ...more] = kept(turns(['assistant', 'Cool! What instrument do you play?'], ['user', 'Oboe, since secondary school.']));
    expect(more).toEqual([]);
    expect(c?.type).toBe('fact');
    expect(c?.text).toMatch(/instrument/iu);
    expect(c?.text).toMatch(/oboe, since secondary school/iu);
    expect(c?.messageIds).toEqual(['u1']);
  });

  it('the same answer without the question states nothing', () => {
    expect(kept(turns(['user', 'Oboe, since secondary school.']))).toEqual([]);
  });

  it('fills the slot of a Chinese question and lets the rules type it (health ranks as health)', () => {
    const [name] = kept(turns(['assistant', '你女儿叫什么名字？'], ['user', '朵朵，刚上幼儿园。']));
    expect(name?.text).toBe('我女儿叫朵朵，刚上幼儿园');
    expect(name?.type).toBe('fact');
    const [allergy] = kept(turns(['assistant', '你对什么过敏吗？'], ['user', '海鲜，吃了浑身起疹子。']));
    expect(allergy?.text).toContain('我对海鲜过敏');
    expect(allergy?.relations).toContainEqual({ source: 'user', relation: 'allergic_to', target: '海鲜' });
    expect(allergy?.importance).toBeGreaterThanOrEqual(0.9);
  });

  it('types by the question predicate when no rule knows the statement: taste, goal, problem', () => {
    expect(kept(turns(['assistant', "What's your favourite board game?"], ['user', 'Carcassonne.']))[0]).toMatchObject({ type: 'preference', text: 'My favourite board game: Carcassonne' });
    expect(kept(turns(['assistant', 'What are you hoping to achieve this year?'], ['user', 'Run a sub-four marathon.']))[0]?.type).toBe('goal');
    expect(kept(turns(['assistant', "What's been bothering you at work?"], ['user', 'The open-plan noise.']))[0]?.type).toBe('pain_point');
  });

  it('a yes/no question has no slot, and a clause with its own subject is a statement, not a value', () => {
    const texts = (q: string, a: string) => kept(turns(['assistant', q], ['user', a])).map((c) => c.text);
    expect(texts('Is Nala your cat?', 'Nala is my tabby, she is two.').filter((t) => /^is nala/iu.test(t))).toEqual([]);
    expect(texts('Have you told your landlord?', 'Emailed him this morning.')).toEqual([]);
    expect(texts('你爸爸退休了吗？', '去年就退了。')).toEqual([]);
    expect(texts('你妈妈平时有什么爱好吗？', '她喜欢跳广场舞。').filter((t) => t.startsWith('我妈妈平时有'))).toEqual([]);
    expect(texts('你姐姐生日是什么时候？', '八月底。')).toEqual(['我姐姐生日是八月底']);
  });

  it('a hedge in the question ("what kind of") does not lower the answer, a hedge in the answer does', () => {
    expect(kept(turns(['assistant', 'What kind of bike do you ride?'], ['user', 'A steel touring bike.']))[0]?.confidence).toBeGreaterThanOrEqual(0.75);
    expect(kept(turns(['assistant', 'What kind of bike do you ride?'], ['user', 'Maybe a gravel bike, not sure.']))).toEqual([]);
  });

  it.each([
    ['Do you have any pets?', 'Not really.'],
    ['Do you have any pets?', 'Haha, long story.'],
    ['What city do you live in?', 'Why do you want to know?'],
    ["What's your dream car?", 'A tank, just kidding.'],
    ['Would you like me to book the table?', 'Yes please, book it for 7.'],
    ['Want me to draft a reply?', 'Sure.'],
    ['How was the concert?', 'Loud but fun.'],
    ['What do you think of this plan?', 'Looks fine.'],
    ['你有没有养宠物？', '没有。'],
    ['周末怎么样？', '哈哈还行。'],
    ['要不要我明天提醒你？', '好啊，提醒我九点开会。'],
    ['你最喜欢哪个城市？', '你猜？'],
    ['你是素食者吧？', '嗯嗯，你看着办。'],
  ])('%s → %s holds no fact', (question, answer) => {
    expect(kept(turns(['assistant', question], ['user', answer]))).toEqual([]);
  });

  it('only questions about the user frame an answer; offers and small talk do not', () => {
    const q = (content: string) => questionOf({ id: 'a', role: 'assistant', content, at: AT });
    expect(q('Great choice. Which airline do you fly with?')?.text).toBe('Which airline do you fly with');
    expect(q('Shall I add it to your list?')).toBeNull();
    expect(q('Here is the plan.')).toBeNull();
    // A choice about the task at hand is a one-off, not a fact about the user.
    expect(q('Which format do you want, PDF or Word?')).toBeNull();
    expect(q('Which colour should the slides use?')).toBeNull();
    expect(q('这份报告你想用哪个模板？')).toBeNull();
    expect(q('需要我帮你订票吗？')).toBeNull();
    expect(questionOf({ id: 'u', role: 'user', content: 'What do you play?', at: AT })).toBeNull();
  });

  it('still reads a failure report as a pain point and a request as nothing, with a question before it', () => {
    expect(kept(turns(['assistant', 'What are you working on today?'], ['user', 'The VPN keeps dropping every afternoon.']))[0]?.type).toBe('pain_point');
    expect(kept(turns(['assistant', '今天在忙什么？'], ['user', '公司的打印机一直卡纸。']))[0]?.type).toBe('pain_point');
    expect(kept(turns(['assistant', 'What are you working on today?'], ['user', 'Remind me to call the bank at 3.']))).toEqual([]);
  });
});

describe('provenance of an answer', () => {
  const screen = (messages: ConversationMessage[], text: string) =>
    screenCandidates([{ text, type: 'fact', intent: 'assert', confidence: 0.9, importance: 0.5, keywords: [], entities: [], relations: [], scope: 'global', emotionTags: [], messageIds: ['u1'], role: 'user', saidAt: AT }], messages, jiebaSegmenter);

  it('the question right before counts beside the user value', () => {
    expect(screen(turns(['assistant', '你老公在哪家银行上班？'], ['user', '招商银行']), '我老公在招商银行上班').accepted).toHaveLength(1);
    expect(screen(turns(['assistant', 'What instrument do you play?'], ['user', 'Oboe.']), 'What instrument I play: Oboe').accepted).toHaveLength(1);
  });

  it('the assistant claims never become the user facts: no value of the user, or a denial', () => {
    expect(screen(turns(['assistant', 'Since you are vegan, should I skip the dairy recipes?'], ['user', 'Sounds good.']), 'I am vegan').accepted).toEqual([]);
    expect(screen(turns(['assistant', 'Is your husband called Jay?'], ['user', 'No, Jay is my brother.']), 'My husband is called Jay').accepted).toEqual([]);
    expect(screen(turns(['assistant', '你老公叫阿杰，在银行上班吗？'], ['user', '不是，阿杰是我哥']), '我老公叫阿杰，在银行上班').accepted).toEqual([]);
  });
});

describe('the rule work reads a user turn with the question before it', () => {
  it('a page scan plans the answer as the inline rules do', async () => {
    const messages = turns(['assistant', 'Which choir do you sing in?'], ['user', 'The Riverside Singers, as a tenor.']);
    const scan = await scanPage(inlineRuleWork, messages, 'UTC', false);
    expect(pageCandidates(scan, messages).candidates.map((c) => c.text)).toEqual(['Which choir I sing in: The Riverside Singers, as a tenor']);
  });
});

describe('labelled answers (test/fixtures/extraction-answers), dev split', () => {
  it('finds the answers of every type and keeps the hard negatives out', () => {
    const { dev } = loadAnswerSplit();
    const { perType, noneKept, nones } = scoreAnswers(loadAnswers().filter((r) => dev.has(r.id)).map(predictAnswer));
    for (const s of Object.values(perType)) {
      expect(s.precision).toBe(1);
      expect(s.recall).toBeGreaterThanOrEqual(0.75);
    }
    expect(noneKept).toBe(nones);
  });
});
