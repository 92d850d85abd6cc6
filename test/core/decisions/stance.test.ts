import { describe, expect, it } from 'vitest';
import { decide, type Neighbour } from '../../../src/core/decisions/decide';
import { reversesStance, stanceOf } from '../../../src/core/decisions/stance';
import { tokenizeForIndex } from '../../../src/shared/segmentation';
import { candidate } from '../../support/candidate';

const side = (text: string) => ({ text, tokens: tokenizeForIndex(text) });

describe('stance', () => {
  it('reads liking, disliking and a negated liking in both languages', () => {
    for (const t of ['I love sushi', 'jazz is my favorite genre', '我超爱吃辣', '香菜我可喜欢了']) expect(stanceOf(t), t).toBe(1);
    for (const t of ["I don't like jazz", "I can't stand big parties", 'not a fan of sushi anymore', '我讨厌香菜', '我不太喜欢看电影', '我现在一点辣都吃不了']) expect(stanceOf(t), t).toBe(-1);
    for (const t of ['I live in Austin', '我对花生过敏', '我是小学老师']) expect(stanceOf(t), t).toBe(0);
  });

  it('counts a reversal only about the same thing', () => {
    expect(reversesStance(side('香菜真的不行，我受不了那个味'), side('我爱吃香菜，越多越好'))).toBe(true);
    expect(reversesStance(side("I've come to hate running"), side('I enjoy running, it clears my head'))).toBe(true);
    // Same stance, other thing, or a shared head of two different compounds: no reversal.
    expect(reversesStance(side('I love jazz'), side('I like jazz'))).toBe(false);
    expect(reversesStance(side("I don't like jazz"), side('I love sushi'))).toBe(false);
    expect(reversesStance(side('我不太喜欢看科幻电影'), side('我喜欢看科幻小说'))).toBe(false);
  });
});

describe('decide on a reversed stance', () => {
  const neighbour = (text: string, over: Partial<Neighbour> = {}): Neighbour => ({
    memory: { id: 'old', text, type: 'preference', scope: 'global', source: { role: 'user' } } as Neighbour['memory'],
    vectorSimilarity: 0.95,
    lexicalOverlap: 0.3,
    sameNormalizedFact: false,
    mentionsSubject: false,
    ...over,
  });

  it('supersedes the earlier taste', () => {
    const d = decide(candidate('我讨厌香菜', { type: 'preference' }), [neighbour('我爱吃香菜', { reversesStance: true })]);
    expect(d).toMatchObject({ action: 'supersede', targetIds: ['old'] });
  });

  it('leaves a global taste alone when the reversal is scoped to one task, and creates without a reversal', () => {
    expect(decide(candidate('这次别放香菜', { type: 'preference', scope: 'task' }), [neighbour('我爱吃香菜', { reversesStance: true })]).action).toBe('create');
    expect(decide(candidate('我也喜欢吃辣', { type: 'preference' }), [neighbour('我爱吃香菜')]).action).toBe('create');
  });
});
