import { describe, expect, it } from 'vitest';
import { boundedMemo } from '../../src/core/bounded-memo';

describe('boundedMemo', () => {
  it('computes a key once, keeps at most the limit, and never keeps what is not worth keeping', () => {
    const calls: string[] = [];
    const length = boundedMemo(
      3,
      (key) => {
        calls.push(key);
        return key.length;
      },
      (key) => key.length < 10,
    );
    expect([length('a'), length('a'), length('bb')]).toEqual([1, 1, 2]);
    expect(calls).toEqual(['a', 'bb']);
    expect([length('x'.repeat(12)), length('x'.repeat(12))]).toEqual([12, 12]);
    expect(calls.filter((k) => k.length === 12)).toHaveLength(2);
    // A fourth key past the limit of three forgets the others, and they are computed again.
    length('ccc');
    length('dddd');
    length('a');
    expect(calls.slice(-3)).toEqual(['ccc', 'dddd', 'a']);
    // An answer that is itself undefined is remembered too.
    let undefinedCalls = 0;
    const nothing = boundedMemo(2, () => {
      undefinedCalls++;
      return undefined;
    });
    nothing('k');
    nothing('k');
    expect(undefinedCalls).toBe(1);
  });
});
