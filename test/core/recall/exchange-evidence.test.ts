import { describe, expect, it } from 'vitest';
import { isCjkQuery, vectorEvidenceFloor } from '../../../src/core/recall/exchange-evidence';

const floors = { cjk: 0.855, other: 0.805 };

describe('vectorEvidenceFloor: the calibrated similarity a vector-only exchange needs', () => {
  it('reads the script of the query, not a language label', () => {
    expect(isCjkQuery('医生对我的膝盖怎么说的？')).toBe(true);
    expect(isCjkQuery('What did the doctor say about my knee?')).toBe(false);
    // Product names inside a Chinese question keep it Chinese; one Chinese word in English does not.
    expect(isCjkQuery('Model Y和Model 3哪个更值得买？')).toBe(true);
    expect(isCjkQuery('How do you say 谢谢 politely in a business email?')).toBe(false);
    expect(isCjkQuery('来週の会議は何時から？')).toBe(true);
    expect(isCjkQuery('123 ?!')).toBe(false);
  });

  it('gives each script its floor, and none when the floor switches the route off', () => {
    expect(vectorEvidenceFloor('我爸吃的是什么药？', floors)).toBe(0.855);
    expect(vectorEvidenceFloor('which pills does my dad take?', floors)).toBe(0.805);
    expect(vectorEvidenceFloor('which pills does my dad take?', { cjk: 0.9, other: 1 })).toBeUndefined();
    expect(vectorEvidenceFloor('我爸吃的是什么药？', { cjk: 1, other: 0.8 })).toBeUndefined();
  });
});
