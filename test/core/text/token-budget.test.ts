import { beforeAll, describe, expect, it } from 'vitest';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import {
  MIN_USEFUL_TOKENS,
  TRUNCATION_MARK,
  countLinesTokens,
  countTokens,
  graphemes,
  selectWithinBudget,
  truncateToTokens,
} from '../../../src/core/text/token-budget';
import { mulberry32 } from '../../support/prng';

const PIECES = ['用户对花生过敏', '最近在学 Rust', 'payment-svc 又挂了', '😀', '👨‍👩‍👧‍👦', '🇨🇳', '👍🏽', 'deploy on Friday', '以后回复用中文', '𠮷野家', ' ', '，', 'ok'];
function randomText(rand: () => number, maxPieces: number): string {
  const n = 1 + Math.floor(rand() * maxPieces);
  return Array.from({ length: n }, () => PIECES[Math.floor(rand() * PIECES.length)]).join('');
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;
// Without the u flag the regex sees code units, which is what detecting a broken pair needs.
const LONE_SURROGATE_UNITS = new RegExp(LONE_SURROGATE.source);

let reference: Tiktoken;
// Both encoders build their BPE tables once here (~0.5 s each), outside the timed tests.
beforeAll(() => {
  countTokens('warm up the encoder');
  reference = new Tiktoken(cl100kBase);
});

describe('countTokens', () => {
  it('counts cl100k_base tokens', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('用户对花生过敏')).toBeGreaterThan(3);
  });

  it('equals js-tiktoken encode().length (the piece cache changes no count)', () => {
    const rand = mulberry32(7);
    for (let i = 0; i < 30; i += 1) {
      const text = randomText(rand, 20) + (i % 3 === 0 ? '\n\n  - [x] <tag> 1234567 \t' : '');
      expect(countTokens(text)).toBe(reference.encode(text, [], []).length);
      // Twice: the second call is served from the cache and must agree.
      expect(countTokens(text)).toBe(reference.encode(text, [], []).length);
    }
  });

  it('counts a block line by line exactly as the joined block (countLinesTokens)', () => {
    // Line edges that a piece could cross: trailing spaces, punctuation, digits, apostrophes, leading spaces, tabs, CR, CRLF,
    // Unicode spaces (no-break, ideographic), empty lines.
    const EDGES = ['', ' ', '  ', '。', '!', "'", "'s", '123', '\t', ' -', '\r', '\n', '\r\n', '\u00a0', '\u3000', '- [fact|global] ', ' (2026-12-02, conf=0.90)'];
    const rand = mulberry32(11);
    const edge = () => EDGES[Math.floor(rand() * EDGES.length)]!;
    for (let i = 0; i < 400; i += 1) {
      const lines = Array.from({ length: 1 + Math.floor(rand() * 8) }, () => (rand() < 0.1 ? edge() : edge() + randomText(rand, 6) + edge()));
      const joined = lines.join('\n');
      expect(countLinesTokens(lines), JSON.stringify(lines)).toBe(reference.encode(joined, [], []).length);
    }
    expect(countLinesTokens([])).toBe(0);
  });

  it('treats special-token text as plain text instead of throwing', () => {
    expect(countTokens('<|endoftext|> and <|im_start|>')).toBeGreaterThan(2);
  });
});

describe('truncateToTokens', () => {
  it('returns text that fits unchanged', () => {
    expect(truncateToTokens('short text', 10)).toBe('short text');
  });

  it('truncates to fit with the mark appended', () => {
    const text = '这是一个很长的记忆，'.repeat(20);
    const out = truncateToTokens(text, 20);
    expect(out.endsWith(TRUNCATION_MARK)).toBe(true);
    expect(countTokens(out)).toBeLessThanOrEqual(20);
    expect(text.startsWith(out.slice(0, -TRUNCATION_MARK.length))).toBe(true);
    expect(truncateToTokens(text, 20, '...')).toMatch(/\.\.\.$/u);
  });

  it('returns an empty string when not even the mark fits', () => {
    expect(truncateToTokens('这是一个很长的记忆'.repeat(5), 1)).toBe('');
  });

  it('never splits a surrogate pair or an emoji cluster', () => {
    const text = '😀👨‍👩‍👧‍👦🇨🇳𠮷👍🏽'.repeat(15);
    const clusters = graphemes(text);
    for (let max = 1; max <= 80; max += 1) {
      const out = truncateToTokens(text, max);
      expect(LONE_SURROGATE_UNITS.test(out)).toBe(false);
      expect(countTokens(out)).toBeLessThanOrEqual(max);
      if (out === '') continue;
      const kept = graphemes(out.slice(0, -TRUNCATION_MARK.length));
      expect(kept).toEqual(clusters.slice(0, kept.length));
    }
  });
});

describe('selectWithinBudget', () => {
  const render = (s: string): string => `- ${s}`;

  it('takes items greedily in order while they fit', () => {
    const items = ['alpha', 'beta', 'gamma'];
    const all = selectWithinBudget(items, 100, render);
    expect(all.chosen.map((c) => c.item)).toEqual(items);
    expect(all.tokens).toBe(countTokens('- alpha\n- beta\n- gamma'));
  });

  it('skips an item too large to truncate usefully and continues with smaller ones', () => {
    const big = 'word '.repeat(200);
    const budget = countTokens('- small one\n- small two') + MIN_USEFUL_TOKENS - 2;
    const result = selectWithinBudget(['small one', big, 'small two'], budget, render);
    expect(result.chosen.map((c) => c.item)).toEqual(['small one', 'small two']);
    expect(result.tokens).toBeLessThanOrEqual(budget);
  });

  it('truncates an item when a useful part fits, keeping prefix and suffix', () => {
    const long = '记忆内容很长很长，'.repeat(40);
    const result = selectWithinBudget([long], 40, (s) => ({ prefix: '- [fact|global] ', body: s, suffix: ' (2026-09-01)' }));
    expect(result.chosen).toHaveLength(1);
    const line = result.chosen[0]!.line;
    expect(result.chosen[0]!.truncated).toBe(true);
    expect(line.startsWith('- [fact|global] 记忆内容')).toBe(true);
    expect(line.endsWith(`${TRUNCATION_MARK} (2026-09-01)`)).toBe(true);
    expect(result.tokens).toBeLessThanOrEqual(40);
  });

  it('counts headers through a custom measure and returns nothing when even they do not fit', () => {
    const header = '[关于你的记忆]';
    const measure = (chosen: readonly { line: string }[]): number =>
      chosen.length === 0 ? 0 : countTokens([header, ...chosen.map((c) => c.line)].join('\n'));
    const result = selectWithinBudget(['a', 'b'], countTokens(`${header}\n- a`), render, { measure });
    expect(result.chosen.map((c) => c.item)).toEqual(['a']);
    expect(selectWithinBudget(['a'], 3, render, { measure }).chosen).toEqual([]);
    expect(selectWithinBudget(['a'], 0, render).chosen).toEqual([]);
  });

  it('never exceeds the budget over randomized mixed zh/en/emoji items (seeded)', () => {
    const rand = mulberry32(20260901);
    for (let run = 0; run < 150; run += 1) {
      const items = Array.from({ length: 1 + Math.floor(rand() * 12) }, () => randomText(rand, 30));
      const budget = 20 + Math.floor(rand() * 1981);
      const result = selectWithinBudget(items, budget, (s) => ({ prefix: '- [fact|global] ', body: s, suffix: ' (2026-09-01, conf=0.90)' }));
      const text = result.chosen.map((c) => c.line).join('\n');
      expect(countTokens(text)).toBe(result.tokens);
      expect(result.tokens).toBeLessThanOrEqual(budget);
      expect(LONE_SURROGATE_UNITS.test(text)).toBe(false);
    }
  });
});
