import { describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../../../src/adapters/text/jieba';
import { decide } from '../../../src/core/decisions/decide';
import { readWording, relateWording, type WordingRelation } from '../../../src/core/decisions/wording';
import type { Memory, MemoryCandidate } from '../../../src/core/types';
import { toNeighbours } from '../../../src/memory/memory-neighbours';
import { candidate } from '../../support/candidate';

/**
 * Earlier / later statements written for this test (not taken from the labelled pairs of
 * test/fixtures/decide-pairs or decide-pairs-2): a change of an attribute of the user that shares
 * no word with the old value, and the look-alikes that must stay apart.
 */
const CASES: [earlier: string, later: string, relation: WordingRelation][] = [
  // Another value of the same attribute, said to be new, no word shared.
  ['I live in Phoenix', 'we relocated to Boise in June', 'reassigns'],
  ["I'm renting a studio downtown", "I'm moving into a farmhouse upstate", 'reassigns'],
  ['我住在南京鼓楼', '前阵子搬去苏州了', 'reassigns'],
  ['I work for a small law firm', 'I joined the city council staff last spring', 'reassigns'],
  ['我在一家外贸公司上班', '我跳槽到一家游戏公司了', 'reassigns'],
  ['I take the subway every day', 'I drive everywhere these days', 'reassigns'],
  ['我每天坐公交', '我买了辆电动车，以后骑车', 'reassigns'],
  ["I'm a pescatarian", "I'm strictly plant-based from now on", 'reassigns'],
  ['我一直吃肉', '我开始吃素了', 'reassigns'],
  ['My phone is a Galaxy S21', "I'm on an iPhone 14 now", 'reassigns'],
  ['我有男朋友', '我们上个月分手了', 'reassigns'],
  ['I go to sleep around 1am', "I'm in bed by 10pm now", 'reassigns'],
  // A sport held beside others changes only when the later one says it replaced the old.
  ['我每周二打网球', '我把网球改成了周四的瑜伽', 'reassigns'],
  ['我每周二打网球', '我最近开始练瑜伽了', 'neither'],
  // Said whole, in other words: the children one has.
  ['I have three kids', "I'm a mom of three", 'same-attribute'],
  ['我有两个女儿', '我是两个孩子的妈', 'same-attribute'],
  // "爸妈" is other people: their move is not the speaker's.
  ['我住在南京', '我爸妈最近搬到苏州了', 'differs'],
];

/**
 * Look-alikes that must stay apart under the attribute rule (they did before it too; values of
 * two different attributes of the user are now read as two facts, `differs`): another person, one more beside the old, a purpose or a condition of its own, another facet of the job,
 * a setting of the device, a wish, a child's new hobby.
 */
const APART: [earlier: string, later: string, relation: WordingRelation][] = [
  ['I live in Phoenix', 'My sister just moved to Tucson', 'differs'],
  ['My wife works at a bank', "I'm single now", 'differs'],
  ['I take the subway every day', 'I also bike now on weekends', 'neither'],
  ['I drive to work', 'I take the bus when it snows now', 'neither'],
  ['I use a ThinkPad for work', 'I just bought an iMac for photo editing', 'neither'],
  ['我办公用ThinkPad', '我新买了一台iMac剪视频用', 'neither'],
  ['I work at a hospital', "I'm a night-shift manager now", 'differs'],
  ['My phone is a Galaxy S21', 'I keep my phone on silent now', 'differs'],
  ['I live in Phoenix', "I'd like to move to Boise someday", 'differs'],
  ['I work for a small law firm', 'I joined a climbing gym last month', 'differs'],
  ['My son plays chess', 'My son started violin lessons', 'neither'],
  // A beginning or a purchase of something else in the sentence: the attribute's value stays.
  ['I drive a Tesla', 'My car got a new windshield', 'neither'],
  ['我每天坐地铁上班', '地铁又涨价了', 'neither'],
  ['I live in Austin', 'I started renting a storage unit', 'neither'],
];

const read = (text: string) => readWording(text, jiebaSegmenter);

describe('relateWording by the attribute of the user a statement gives a value to', () => {
  it.each(CASES)('%s ⇒ %s: %s', (earlier, later, relation) => {
    expect(relateWording(read(later), read(earlier))).toBe(relation);
  });
  it.each(APART)('keeps apart %s ⇒ %s: %s', (earlier, later, relation) => {
    expect(relateWording(read(later), read(earlier))).toBe(relation);
  });
});

/** English change words in the present or progressive, with a shared word: a changed value as "switched" was. */
describe('present and progressive words of change', () => {
  it.each([
    ['I keep my recipes in Paprika', "I'm switching my recipes to a Google Doc", 'replaces'],
    ['I store my photos in iCloud', 'I switch my photos over to a NAS', 'replaces'],
    ['My runs are on Tuesday evenings', "I'm moving my runs to Saturday mornings", 'replaces'],
    // A plan to switch is a wish, and changes nothing yet.
    ['I keep my recipes in Paprika', "I'm thinking of switching my recipes to a Google Doc", 'differs'],
    ['我在一家外贸公司上班', '我在考虑跳槽到游戏公司', 'differs'],
  ] as const)('%s ⇒ %s: %s', (earlier, later, relation) => {
    expect(relateWording(read(later), read(earlier))).toBe(relation);
  });
});

function memory(text: string, over: Partial<Memory> = {}): Memory {
  const at = new Date('2026-01-01T00:00:00Z');
  return { id: 'old', userId: 'u', text, type: 'fact', status: 'active', scope: 'global', confidence: 0.9, importance: 0.5, source: { role: 'user' }, createdAt: at, updatedAt: at, ...over } as Memory;
}

function decideAt(earlier: Memory, later: MemoryCandidate, similarity: number) {
  return decide(later, toNeighbours(later, [earlier], new Map([[earlier.id, similarity]])));
}

describe('decide on an attribute of the user', () => {
  it('supersedes the old value with a new one that shares no word, also when the move was read as an event', () => {
    expect(decideAt(memory('I live in Phoenix'), candidate('we relocated to Boise in June', { type: 'event' }), 0.84)).toMatchObject({ action: 'supersede', targetIds: ['old'] });
    expect(decideAt(memory('我在一家外贸公司上班'), candidate('我跳槽到一家游戏公司了'), 0.9)).toMatchObject({ action: 'supersede', targetIds: ['old'] });
  });

  it('lets neither a complaint replace a value nor a new value replace a problem', () => {
    expect(decideAt(memory('I take the subway every day'), candidate('I drive everywhere these days', { type: 'pain_point' }), 0.88).action).toBe('create');
    expect(decideAt(memory('the subway is always late', { type: 'pain_point' }), candidate('I drive everywhere these days'), 0.88).action).toBe('create');
  });

  it('rewrites a whole attribute restated in other words when the embeddings agree, and keeps both below the bar', () => {
    expect(decideAt(memory('I have three kids'), candidate("I'm a mom of three"), 0.9)).toMatchObject({ action: 'update', targetId: 'old' });
    expect(decideAt(memory('I have three kids'), candidate("I'm a mom of three"), 0.8).action).toBe('create');
  });

  it('supersedes only the memory of the same attribute', () => {
    const later = candidate('just relocated to Boise');
    const home = memory('I live in Phoenix', { id: 'home' });
    const job = memory('I work for a small law firm', { id: 'job' });
    const d = decide(later, toNeighbours(later, [job, home], new Map([['job', 0.86], ['home', 0.85]])));
    expect(d).toMatchObject({ action: 'supersede', targetIds: ['home'] });
  });
});
