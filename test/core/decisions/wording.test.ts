import { describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../../../src/adapters/text/jieba';
import { decide } from '../../../src/core/decisions/decide';
import { readWording, relateWording, type WordingRelation } from '../../../src/core/decisions/wording';
import type { Memory, MemoryCandidate } from '../../../src/core/types';
import { toNeighbours } from '../../../src/memory/memory-neighbours';
import { candidate } from '../../support/candidate';

/**
 * Earlier / later statements written for this test (not taken from the labelled pairs of
 * test/fixtures/decide-pairs), with what the later one's words say of the earlier one.
 */
const CASES: [earlier: string, later: string, relation: WordingRelation][] = [
  // The same content words in another order, with particles or hedges.
  ['我对芒果过敏', '芒果的话我是过敏的', 'restates'],
  ['我每天早上喝咖啡', '咖啡我每天早上都喝', 'restates'],
  ["I'm allergic to shellfish", "shellfish, I'm allergic to it", 'restates'],
  ['My favorite editor is Vim', 'Vim is my favorite editor', 'restates'],
  // A compound names a kind of its last word; "can't" says what "don't" does.
  ['我用笔记本电脑写代码', '我用电脑写代码', 'restates'],
  ['我不吃香菜', '香菜我吃不了', 'restates'],
  // Everything the earlier one said, and more.
  ['我养了一只猫', '我养了一只猫，叫年糕', 'elaborates'],
  ['I work at Google', 'I work at Google now, on the Maps team', 'elaborates'],
  // The same thing, another value, said to be new.
  ['我在上海工作', '我现在在深圳工作了', 'replaces'],
  ['我的车是本田', '车换成特斯拉了', 'replaces'],
  ['I run on Tuesday evenings', 'my runs moved to Thursday mornings', 'replaces'],
  ['My browser is Firefox', 'My browser is Chrome now', 'replaces'],
  // An ending of what the earlier one said.
  ['I drink two coffees a day', 'I quit coffee', 'ends'],
  ['I live in Austin', 'I used to live in Austin', 'ends'],
  ['Notion is where I keep my notes', 'I ditched Notion for Obsidian', 'ends'],
  // Another fact of the same shape: another value, person, polarity or thing. Both stay.
  ['我对芒果过敏', '我对海鲜过敏', 'differs'],
  ['我哥住在成都', '我住在成都', 'differs'],
  // A thing of the user's beside the user: "my startup" is based there, which says nothing of where the user is.
  ["I'm based in Portland", 'My startup is based in Portland', 'differs'],
  ['I live in a small flat', 'My dog lives in a small flat with me', 'differs'],
  ['We are in Lisbon for the summer', 'Our boat is in Lisbon for the summer', 'differs'],
  ['My brother plays guitar', 'My sister plays guitar now', 'differs'],
  ['我喜欢喝茶', '我不喜欢喝茶', 'differs'],
  ['我想去日本', '我去过日本', 'differs'],
  ["I'd like to live in Tokyo", 'I live in Tokyo', 'differs'],
  // What was beside what is: both stay, whichever came first.
  ['I lived in Denver', 'I live in Denver', 'differs'],
  ['I live in Denver', 'I lived in Denver', 'differs'],
  ['I worked at a bakery', 'I work at a bakery', 'differs'],
  ['I was a nurse', "I'm a nurse", 'differs'],
  ['我在武汉住过', '我住在武汉', 'differs'],
  ['我住在武汉', '我以前住在武汉', 'differs'],
  // The past on both sides is one fact; "-ed" adjectives are no past tense.
  ['I lived in Denver for years', 'I lived in Denver', 'restates'],
  ["I'm married", 'I am married', 'restates'],
  ['我在武汉住过', '武汉我住过', 'restates'],
  // Two attributes of the user at the same hour: going to bed is not getting up.
  ['我十一点睡觉', '我十一点起床', 'differs'],
  ['I go to bed at 11pm', 'I get up at 11pm', 'differs'],
  ['I like dogs', 'I like cats and hate dogs', 'differs'],
  ['我对花生过敏', '我对花生酱过敏', 'differs'],
  ["I'm allergic to peanuts", "I'm allergic to peanut butter", 'differs'],
  ['我喜欢猫', '我喜欢猫的视频', 'differs'],
  ['I like cats', 'I like videos of cats', 'differs'],
  ['I drink coffee every morning', 'I stopped drinking soda', 'differs'],
  ['我每天玩手机两小时', '手机换成iPhone 15了', 'differs'],
  ['我在学日语', '我现在在学吉他', 'differs'],
  ['My biggest worry is the nightly backup failing', 'My biggest worry right now is the wifi dropping', 'differs'],
  // Nothing shared that names a thing, or one more beside the old: the words do not decide.
  ['I have a cat', 'I now have a dog too', 'neither'],
  ['我周末游泳', '我现在周末也去爬山', 'neither'],
  ['I use VS Code for work', 'I use Vim now for my own projects', 'neither'],
];

const read = (text: string) => readWording(text, jiebaSegmenter);

describe('relateWording', () => {
  it.each(CASES)('%s ⇒ %s: %s', (earlier, later, relation) => {
    expect(relateWording(read(later), read(earlier))).toBe(relation);
  });
});

function memory(text: string, over: Partial<Memory> = {}): Memory {
  const at = new Date('2026-01-01T00:00:00Z');
  return { id: 'old', userId: 'u', text, type: 'fact', status: 'active', scope: 'global', confidence: 0.9, importance: 0.5, source: { role: 'user' }, createdAt: at, updatedAt: at, ...over } as Memory;
}

/** The decision on `later` beside `earlier`, at a similarity under the duplicate bar: only the words can merge or replace. */
function decideOn(earlier: Memory, later: MemoryCandidate) {
  return decide(later, toNeighbours(later, [earlier], new Map([[earlier.id, 0.9]])));
}

describe('decide by the wording of a neighbour', () => {
  it('reinforces a restatement and rewrites a memory with a statement that says more', () => {
    expect(decideOn(memory('我对芒果过敏'), candidate('芒果的话我是过敏的'))).toMatchObject({ action: 'reinforce', targetId: 'old' });
    expect(decideOn(memory('I work at Google'), candidate('I work at Google now, on the Maps team'))).toMatchObject({ action: 'update', targetId: 'old' });
  });

  it('keeps another fact of the same shape apart, however close the embeddings put it', () => {
    const earlier = memory('我对芒果过敏');
    const later = candidate('我对海鲜过敏');
    expect(decide(later, toNeighbours(later, [earlier], new Map([['old', 0.96]]))).action).toBe('create');
  });

  it('supersedes a changed value, also when the change was read as a resolution that names nothing', () => {
    expect(decideOn(memory('我在上海工作'), candidate('我现在在深圳工作了'))).toMatchObject({ action: 'supersede', targetIds: ['old'] });
    expect(decideOn(memory('My browser is Firefox', { type: 'preference' }), candidate('My browser is Chrome now'))).toMatchObject({ action: 'supersede', targetIds: ['old'] });
    expect(decideOn(memory('我每天练瑜伽'), candidate('瑜伽停了', { intent: 'resolve' }))).toMatchObject({ action: 'supersede', targetIds: ['old'] });
  });

  it('replaces no open problem with a new one, but ends one whose thing is over', () => {
    const painPoint = memory('我最头疼的是打印机老卡纸', { type: 'pain_point' });
    expect(decideOn(painPoint, candidate('打印机换成激光的了'))).toMatchObject({ action: 'create' });
    expect(decideOn(painPoint, candidate('打印机淘汰了'))).toMatchObject({ action: 'supersede', targetIds: ['old'] });
  });

  it('supersedes only the closest of the memories a change could be about', () => {
    const later = candidate('My browser is Chrome now');
    const home = memory('My browser is Firefox', { id: 'home' });
    const work = memory('My browser at work is Firefox', { id: 'work' });
    const d = decide(later, toNeighbours(later, [work, home], new Map([['home', 0.95], ['work', 0.9]])));
    expect(d).toMatchObject({ action: 'supersede', targetIds: ['home'] });
  });

  it('merges only statements of types that can say the same thing, and a task never rewrites a global memory', () => {
    expect(decideOn(memory('Vim is my favorite editor', { type: 'preference' }), candidate('My favorite editor is Vim')).action).toBe('reinforce');
    expect(decideOn(memory('我对芒果过敏'), candidate('芒果的话我是过敏的', { scope: 'task' })).action).toBe('reinforce');
    expect(decideOn(memory('我想学日语', { type: 'goal' }), candidate('日语我想学', { type: 'event' })).action).toBe('create');
    expect(decideOn(memory('I work at Google'), candidate('I work at Google now, on the Maps team', { scope: 'task' })).action).toBe('create');
    expect(decideOn(memory('我在上海工作'), candidate('我现在在深圳工作了', { scope: 'task' })).action).toBe('create');
  });
});
