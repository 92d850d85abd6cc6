import { describe, expect, it } from 'vitest';
import { boundedMemo, boundedScopedMemo } from '../../src/core/bounded-memo';

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

  it('boundedScopedMemo keeps a number apart in each scope, and at most the limit over all scopes together', () => {
    const calls: string[] = [];
    const placed = boundedScopedMemo(4, (scope, key) => {
      calls.push(`${scope}:${key}`);
      return key === 0 ? null : `${scope}@${key}`;
    });
    expect([placed('UTC', 1), placed('Asia/Tokyo', 1), placed('UTC', 1), placed('Asia/Tokyo', 1)]).toEqual(['UTC@1', 'Asia/Tokyo@1', 'UTC@1', 'Asia/Tokyo@1']);
    expect(calls).toEqual(['UTC:1', 'Asia/Tokyo:1']);
    // A null answer is remembered too, and NaN is one key like any other.
    placed('UTC', 0);
    placed('UTC', 0);
    placed('UTC', Number.NaN);
    placed('UTC', Number.NaN);
    expect(calls.filter((c) => c === 'UTC:0' || c === 'UTC:NaN')).toEqual(['UTC:0', 'UTC:NaN']);
    // Four kept over two scopes: a fifth in a third scope forgets them all, whatever their scope.
    placed('Europe/Paris', 5);
    placed('UTC', 1);
    placed('Asia/Tokyo', 1);
    expect(calls.slice(-3)).toEqual(['Europe/Paris:5', 'UTC:1', 'Asia/Tokyo:1']);
  });
});
