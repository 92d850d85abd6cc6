import { describe, expect, it } from 'vitest';
import { jiebaSegmenter } from '../../../src/adapters/text/jieba';
import { lineEntityNames, MAX_LINE_ENTITIES } from '../../../src/core/extraction/line-entities';
import { canonicalEntity } from '../../../src/core/recall/graph';

const keys = (text: string): string[] => lineEntityNames(text, jiebaSegmenter).map(canonicalEntity);

describe('lineEntityNames: the named things of one chat line', () => {
  it('finds relatives, places and people named mid-sentence, in the memory graph keys', () => {
    expect(keys('My mom met Jon in New York last week.')).toEqual(expect.arrayContaining(['kin:mother', 'jon', 'new york']));
    expect(keys('我妈上周去了杭州。')).toEqual(expect.arrayContaining(['kin:mother', '杭州']));
  });

  it('leaves out who spoke, greetings and sentence openers', () => {
    const found = keys('Melanie: Yesterday I went to the park with Ana. Thanks for asking.');
    expect(found).toEqual(['ana']);
  });

  it('never joins two sentences into one name, and keeps at most a dozen names', () => {
    expect(keys('I told Mel. Relaxing is key.')).toEqual(['mel']);
    const many = Array.from({ length: 30 }, (_, i) => `Name${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`).join(', ');
    expect(lineEntityNames(`I saw ${many} there.`, jiebaSegmenter).length).toBe(MAX_LINE_ENTITIES);
  });

  it('names nothing in a line without names', () => {
    expect(keys('ok, sounds good')).toEqual([]);
  });
});

describe('lineEntityNames: a name used to address someone', () => {
  it('is not what the line is about', () => {
    expect(keys('Thanks, Melanie! That is sweet.')).toEqual([]);
    expect(keys('Wow, that is so cool, Caroline! What happened?')).toEqual([]);
    expect(keys('Hey Jon, I moved to Lisbon.')).toEqual(['lisbon']);
  });

  it('is still a name when the line speaks about the person', () => {
    expect(keys('I met Jon, Ana and Li in Lisbon.')).toEqual(expect.arrayContaining(['jon', 'ana', 'li', 'lisbon']));
    expect(keys('Guess what, yesterday Ana opened her studio.')).toEqual(['ana']);
  });
});
