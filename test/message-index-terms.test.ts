import { describe, expect, it } from 'vitest';
import { MESSAGE_INDEX_MAX_TERMS, messageIndexTerms } from '../src/shared/rule-work';

describe('messageIndexTerms', () => {
  it('indexes a message within the bound whole, in order of first occurrence', () => {
    expect(messageIndexTerms(['tea', 'green', 'tea'])).toEqual([['tea', 2], ['green', 1]]);
  });

  it('keeps the most frequent terms of a longer message, ties by first occurrence', () => {
    const junk = Array.from({ length: 2 * MESSAGE_INDEX_MAX_TERMS }, (_, i) => `w${i}`);
    const terms = messageIndexTerms([...junk, 'peanut', 'w100', 'peanut']);
    expect(terms).toHaveLength(MESSAGE_INDEX_MAX_TERMS);
    expect(terms.slice(0, 3)).toEqual([['w100', 2], ['peanut', 2], ['w0', 1]]);
    expect(terms[MESSAGE_INDEX_MAX_TERMS - 1]).toEqual([`w${MESSAGE_INDEX_MAX_TERMS - 2}`, 1]);
  });
});
