import { describe, expect, it } from 'vitest';
import { englishStem } from '../../../src/core/text/stem';

describe('englishStem (Porter2)', () => {
  // Expected stems are the Snowball English stemmer's; test/bm25-stems.int.test.ts checks the
  // whole algorithm against PostgreSQL's english_stem dictionary word for word.
  it('brings inflections of one word together', () => {
    for (const w of ['paint', 'paints', 'painted', 'painting']) expect(englishStem(w)).toBe('paint');
    for (const w of ['allergy', 'allergies']) expect(englishStem(w)).toBe('allergi');
    for (const w of ['hike', 'hikes', 'hiked', 'hiking']) expect(englishStem(w)).toBe('hike');
    expect(englishStem('running')).toBe('run');
    expect(englishStem('hopping')).toBe('hop');
    expect(englishStem('hoping')).toBe('hope');
    expect(englishStem('controlled')).toBe('control');
  });

  it('keeps derivations a suffix apart when Porter2 does (a stemmer, not a lemmatiser)', () => {
    expect(englishStem('allergic')).toBe('allerg');
    expect(englishStem('allergic')).not.toBe(englishStem('allergies'));
  });

  it('follows the rules of each step', () => {
    expect(englishStem('caresses')).toBe('caress'); // 1a sses
    expect(englishStem('cries')).toBe('cri'); // 1a ies after two letters
    expect(englishStem('ties')).toBe('tie'); // 1a ies after one letter
    expect(englishStem('gas')).toBe('gas'); // 1a: no vowel before the letter before s
    expect(englishStem('kiwis')).toBe('kiwi');
    expect(englishStem('agreed')).toBe('agre'); // 1b eed in R1
    expect(englishStem('feed')).toBe('feed'); // 1b eed outside R1
    expect(englishStem('cry')).toBe('cri'); // 1c
    expect(englishStem('say')).toBe('say'); // 1c: y after a vowel stays
    expect(englishStem('national')).toBe('nation'); // 2 tional
    expect(englishStem('fluently')).toBe('fluentli'); // 2: longest suffix not in R1, nothing shorter tried
    expect(englishStem('geology')).toBe('geolog'); // 2 ogi after l
    expect(englishStem('hopefulness')).toBe('hope'); // 2 fulness, 3 ful
    expect(englishStem('digitizer')).toBe('digit'); // 2 izer, 4 ize
    expect(englishStem('generously')).toBe('generous'); // the gener- prefix
    expect(englishStem('university')).toBe('univers');
    expect(englishStem("anne's")).toBe('ann'); // step 0, step 5
  });

  it('knows the exception words', () => {
    expect(englishStem('skies')).toBe('sky');
    expect(englishStem('dying')).toBe('die');
    expect(englishStem('news')).toBe('news');
    expect(englishStem('succeeding')).toBe('succeed');
    expect(englishStem('inning')).toBe('inning');
  });

  it('leaves short words, numbers, identifiers and non-English words alone', () => {
    for (const w of ['is', 'ox', '3rd', 'k8s', 'payment-svc', 'node.js', 'café', 'naïve', '过敏', 'постели', '']) {
      expect(englishStem(w)).toBe(w);
    }
  });

  it('does not read object keys as exceptions', () => {
    expect(englishStem('constructor')).toBe('constructor');
    expect(englishStem('prototype')).toBe('prototyp');
  });
});
