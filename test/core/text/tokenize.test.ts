import { beforeAll, describe, expect, it } from 'vitest';
import type { Segmenter } from '../../../src/core/text/segmenter';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeForIndex, indexTokens, STOPWORDS, termFrequencies, toStems } from '../../../src/core/text/tokenize';
import { surfaceTokensForIndex, tokenizeForIndex } from '../../../src/adapters/text/jieba';

describe('tokenizeForIndex', () => {
  // Loads the jieba dictionary once so the individual tests measure tokenising only.
  beforeAll(() => {
    tokenizeForIndex('预热');
  });

  it('segments Chinese with jieba search mode and drops stopwords', () => {
    expect(tokenizeForIndex('用户对花生过敏')).toEqual(['用户', '对', '花生', '过敏']);
    const tokens = tokenizeForIndex('我的主力项目是支付服务');
    expect(tokens).toContain('项目');
    expect(tokens).not.toContain('我');
    expect(tokens).not.toContain('的');
    expect(tokens).not.toContain('是');
  });

  it('emits sub-words of long words so partial queries match', () => {
    const tokens = tokenizeForIndex('上海市浦东新区');
    expect(tokens).toContain('上海市浦东新区');
    expect(tokens).toContain('上海');
    expect(tokens).toContain('浦东');
  });

  it('keeps identifiers whole and split on mixed zh/en text', () => {
    const tokens = tokenizeForIndex('当前主力项目为payment-svc，用TypeScript_v2写的');
    expect(tokens).toEqual(expect.arrayContaining(['payment-svc', 'payment', 'svc', 'typescript_v2', 'typescript', 'v2', '项目']));
    expect(tokens.indexOf('payment-svc')).toBeLessThan(tokens.indexOf('payment'));
  });

  it('lowercases, folds full-width forms and drops English stopwords', () => {
    expect(tokenizeForIndex('Ｈｅｌｌｏ　ＷＯＲＬＤ，I am the Owner of ＡＰＩ')).toEqual(['hello', 'world', 'owner', 'api']);
  });

  it('keeps numbers, versions and language names like c++', () => {
    const tokens = tokenizeForIndex('预算 3.14 万，订单号 20260101，用 C++ 和 node.js 18');
    expect(tokens).toEqual(expect.arrayContaining(['3.14', '20260101', 'c++', 'node.js', 'node', 'js', '18']));
    // A decimal number is not split into meaningless parts.
    expect(tokens).not.toContain('14');
  });

  it('drops punctuation, whitespace and emoji tokens', () => {
    const tokens = tokenizeForIndex('天气！！😀 … —— ok?  \n\t 👍🏽');
    expect(tokens).toEqual(['天气', 'ok']);
    expect(tokenizeForIndex('，。！？…  ')).toEqual([]);
    expect(tokenizeForIndex('')).toEqual([]);
  });

  it('is deterministic and uses the same normalisation for queries and documents', () => {
    const doc = tokenizeForIndex('Payment-SVC 部署在 K8s 上');
    const query = tokenizeForIndex('ｐａｙｍｅｎｔ－ｓｖｃ怎么部署');
    expect(query).toEqual(expect.arrayContaining(['payment-svc', '部署']));
    expect(doc).toEqual(tokenizeForIndex('Payment-SVC 部署在 K8s 上'));
  });

  it('has a small bilingual stopword list', () => {
    for (const w of ['的', '了', '是', '我', '你', '吗', '呢', '啊', '吧', 'the', 'a', 'an', 'is', 'are', 'to', 'of', 'and', 'i', 'you', 'my', 'me']) {
      expect(STOPWORDS.has(w)).toBe(true);
    }
    // Negation changes meaning and must stay searchable.
    expect(STOPWORDS.has('不')).toBe(false);
    expect(STOPWORDS.has('not')).toBe(false);
  });
});

describe('termFrequencies', () => {
  it('counts occurrences', () => {
    const tf = termFrequencies(['花生', '过敏', '花生']);
    expect(tf.get('花生')).toBe(2);
    expect(tf.get('过敏')).toBe(1);
    expect(tf.size).toBe(2);
    expect(termFrequencies([]).size).toBe(0);
  });
});

describe('indexTokens (core, segmenter injected)', () => {
  // A stand-in that cuts Chinese into single characters: core tokenisation runs without jieba.
  const chars: Segmenter = { cutForSearch: (text) => [...text], tag: (text) => [...text].map((word) => ({ word, tag: 'x' })) };

  it('hands only the non-Latin runs to the segmenter and keeps its own rules for the rest', () => {
    const seen: string[] = [];
    const spy: Segmenter = { ...chars, cutForSearch: (text) => (seen.push(text), chars.cutForSearch(text)) };
    expect(indexTokens('Ｐａｙｍｅｎｔ-svc 超时了', spy)).toEqual(['payment-svc', 'payment', 'svc', '超', '时']);
    expect(seen).toEqual([' 超时了']);
  });
});

describe('analyzeForIndex (English words as their stems)', () => {
  const chars: Segmenter = { cutForSearch: (text) => [...text], tag: (text) => [...text].map((word) => ({ word, tag: 'x' })) };

  it('replaces each English word by its Porter2 stem, one term per word', () => {
    expect(analyzeForIndex('She painted walls; painting relaxes her', chars)).toEqual(['paint', 'wall', 'paint', 'relax']);
    expect(analyzeForIndex('paint', chars)).toEqual(['paint']);
  });

  it('makes a query meet a document through another form of its word', () => {
    const doc = new Set(tokenizeForIndex('I have allergies to peanuts'));
    expect(tokenizeForIndex('what allergy do I have').filter((t) => doc.has(t))).toEqual(['allergi']);
    expect(surfaceTokensForIndex('what allergy do I have').filter((t) => doc.has(t))).toEqual([]);
  });

  it('keeps a word whose stem is a stopword ("having" → "have")', () => {
    expect(toStems(['having', 'hiking'])).toEqual(['having', 'hike']);
  });

  it('leaves Chinese, numbers and identifiers as indexTokens has them', () => {
    const text = '当前主力项目为payment-svc，预算 3.14 万，用 node.js 18';
    expect(analyzeForIndex(text, chars)).toEqual(indexTokens(text, chars));
    expect(tokenizeForIndex('用户对花生过敏')).toEqual(surfaceTokensForIndex('用户对花生过敏'));
  });

  it("migration 1797200000000 re-posts old postings with the tokenizer's English stopwords", () => {
    const sql = readFileSync(join(__dirname, '../../../migrations/1797200000000_bm25-english-stems.sql'), 'utf8');
    const list = /SELECT bm25_restem_postings\(NULL, ARRAY\[([^\]]*)\]/u.exec(sql)?.[1] ?? '';
    const inMigration = [...list.matchAll(/'((?:[^']|'')*)'/gu)].map((m) => m[1]!.replace(/''/gu, "'"));
    expect(inMigration.sort()).toEqual([...STOPWORDS].filter((w) => /^[a-z']+$/u.test(w)).sort());
  });
});
