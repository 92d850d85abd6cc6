import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyScene, groupScenes, keywordHits, SCENE_HEADERS, sceneBlock, type SceneMemory } from '../../../src/core/persona/scenes';
import { countTokens } from '../../../src/core/text/token-budget';
import { formatContext } from '../../../src/core/recall/format';

const at = new Date('2026-06-01T00:00:00Z');
const mem = (id: string, text: string, type: SceneMemory['type'] = 'fact', importance = 0.5): SceneMemory => ({ id, text, type, importance, createdAt: at });

describe('scene grouping (pure)', () => {
  it('matches the lexicon bilingually: Han words anywhere, English stems at a word start only', () => {
    expect([...keywordHits('我对青霉素过敏').keys()]).toEqual(['health']);
    expect([...keywordHits('I am allergic to cats').keys()].sort()).toEqual(['health', 'home']);
    // "scattered" holds "cat" but not at a word start.
    expect(keywordHits('scattered thoughts').has('home')).toBe(false);
    expect(classifyScene({ text: '我女儿今年上小学' })).toBe('family');
    expect(classifyScene({ text: 'My manager moved the deadline' })).toBe('work');
    expect(classifyScene({ text: 'nothing to see here' })).toBe('other');
  });

  it('with vectors, the closest prototype decides; a weak best score is other', () => {
    const prototypes = new Map([
      ['work', [1, 0, 0]],
      ['health', [0, 1, 0]],
    ] as const);
    expect(classifyScene({ text: 'xyz', vector: [0.1, 0.99, 0], prototypes: prototypes as never })).toBe('health');
    expect(classifyScene({ text: 'xyz', vector: [0, 0, 1], prototypes: prototypes as never })).toBe('other');
  });

  it('groups largest scene first, other last, instructions and assistant contributions outside, deterministically', () => {
    const memories = [
      mem('a', '我对花生过敏'),
      mem('b', '我每周去医院复查血压', 'event'),
      mem('c', '我老婆是老师'),
      mem('d', '回答请用中文', 'instruction'),
      mem('e', '随便记一下', 'fact'),
      mem('f', '助手推荐了一家医院', 'assistant_contribution'),
    ];
    const index = groupScenes(memories, { language: 'zh' });
    expect(index.scenes.map((s) => [s.id, s.memoryIds])).toEqual([
      ['health', ['a', 'b']],
      ['family', ['c']],
      ['other', ['e']],
    ]);
    expect(groupScenes([...memories].reverse(), { language: 'zh' })).toEqual(index);
    expect(index.scenes[0]!.hints.length).toBeGreaterThan(0);
  });

  it('the block keeps whole lines within its token share, dropping the least important scenes first', () => {
    const memories = ['我对花生过敏', '我在公司做后端', '我女儿上小学', '我喜欢弹吉他', '我爱吃火锅', '我下周出差', '我在学日语', '我在还房贷', '我家养了猫', '我朋友结婚'].map((t, i) => mem(String(i), t));
    const index = groupScenes(memories, { language: 'zh' });
    const whole = sceneBlock(index, 10_000);
    expect(whole.lines).toHaveLength(10);
    const cut = sceneBlock(index, 80);
    expect(cut.lines.length).toBeLessThan(10);
    expect(cut.lines.length).toBeGreaterThan(0);
    const idOf = (l: string) => l.split(' ')[1];
    expect(whole.lines.slice(0, cut.lines.length).map(idOf)).toEqual(cut.lines.map(idOf));
    expect(countTokens([cut.header, ...cut.lines].join('\n'))).toBeLessThanOrEqual(80);
    expect(sceneBlock(index, 5).lines).toEqual([]);
    // Past the share, hint words go before whole scenes do.
    const hinted = groupScenes([mem('x', '我对花生过敏，医生让我少吃甜食'), mem('y', '我女儿和儿子都在上小学')], { language: 'zh' });
    const roomy = sceneBlock(hinted, 200);
    expect(roomy.lines.every((l) => l.includes(': '))).toBe(true);
    const tight = sceneBlock(hinted, countTokens([roomy.header, ...roomy.lines].join('\n')) - 1);
    expect(tight.lines).toHaveLength(2);
    expect(tight.lines.some((l) => !l.includes(': '))).toBe(true);
    expect(whole.lines[0]).toMatch(/^- \w+ \S+\(1\)/u);
  });
});

describe('the navigation block in the formatted context', () => {
  const scenes = { header: SCENE_HEADERS.en, lines: ['- health Health (3): allerg, doctor', '- work Work (2): manager', '- family Family (1): wife'] };
  const persona = { header: '[User profile]', lines: [{ text: '- About: I am a nurse', memoryIds: ['p'] }] };
  const instruction = { id: 'i', text: 'Answer briefly', type: 'instruction' as const, scope: 'global' as const, createdAt: at, confidence: 1 };

  it('sits after the persona and before the standing instructions, the same bytes whatever the memories of the message', () => {
    const a = formatContext({ persona, scenes, scenesShare: 0.1, instructions: [instruction], memories: [], budget: 800 });
    const b = formatContext({ persona, scenes, scenesShare: 0.1, instructions: [instruction], memories: [{ id: 'm', text: 'I like tea', type: 'preference', scope: 'global', createdAt: at, confidence: 0.9 }], budget: 800 });
    expect(a.system).toBe(b.system);
    const lines = a.system.split('\n');
    expect(lines[0]).toBe('[User profile]');
    expect(lines[2]).toBe(SCENE_HEADERS.en);
    expect(a.system.indexOf('Answer briefly')).toBeGreaterThan(a.system.indexOf('- family Family'));
    // The block is counted against the budget (never under-counted).
    expect(a.tokens).toBeGreaterThanOrEqual(countTokens(a.system) + countTokens(a.userPrefix));
    expect(a.tokens).toBeLessThanOrEqual(800);
  });

  it('takes no more than its share: a small budget keeps fewer scenes, and share 0 none', () => {
    const full = formatContext({ scenes, scenesShare: 0.1, memories: [], budget: 800 });
    expect(full.system.split('\n')).toHaveLength(4);
    const small = formatContext({ scenes, scenesShare: 0.1, memories: [], budget: 300 });
    expect(small.system.split('\n').length).toBeLessThan(4);
    expect(small.system.split('\n').length).toBeGreaterThan(1);
    expect(countTokens(small.system)).toBeLessThanOrEqual(30);
    expect(formatContext({ scenes, scenesShare: 0, memories: [], budget: 800 }).system).toBe('');
  });
});

describe('the labelled set', () => {
  const rows = readFileSync(new URL('../../fixtures/scenes/labelled.jsonl', import.meta.url), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { text: string; lang: string; scene: string; split: string });
  it('has at least 80 items in both languages, split into tune and held-out halves', () => {
    expect(rows.length).toBeGreaterThanOrEqual(80);
    expect(new Set(rows.map((r) => r.lang))).toEqual(new Set(['zh', 'en']));
    const held = rows.filter((r) => r.split === 'heldout');
    expect(held.length).toBeGreaterThanOrEqual(40);
    expect(rows.filter((r) => r.split === 'tune').length).toBeGreaterThanOrEqual(40);
  });

  it('the lexicon alone (no embedder) gets most of the held-out half right', () => {
    const held = rows.filter((r) => r.split === 'heldout');
    const right = held.filter((r) => classifyScene({ text: r.text }) === r.scene).length;
    expect(right / held.length).toBeGreaterThanOrEqual(0.7);
  });
});
