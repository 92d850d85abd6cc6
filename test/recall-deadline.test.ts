import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode, MemoryServiceError } from '../src/core/errors';
import { withDeadline } from '../src/recall/deadline';

function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}

describe('a deadline shared by the routes of one recall', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-12-05T04:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('answers what settles in time, and fails what does not with dependencyTimeout', async () => {
    const deadline = Date.now() + 100;
    const fast = withDeadline(Promise.resolve('fast'), deadline);
    const slow = withDeadline(never<string>(), deadline);
    const failing = withDeadline(Promise.reject(new Error('store down')), deadline);
    await expect(fast).resolves.toBe('fast');
    await expect(failing).rejects.toThrow('store down');
    const caught = slow.catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(99);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    const err = await caught;
    expect(err).toBeInstanceOf(MemoryServiceError);
    expect((err as MemoryServiceError).code).toBe(ErrorCode.dependencyTimeout);
  });

  it('sets one timer for every promise racing one deadline, and clears it when the last settles', async () => {
    const deadline = Date.now() + 1_000;
    const releases: (() => void)[] = [];
    const racing = Array.from({ length: 12 }, () => withDeadline(new Promise<void>((resolve) => releases.push(resolve)), deadline));
    expect(vi.getTimerCount()).toBe(1);
    releases.slice(0, 11).forEach((release) => release());
    await Promise.all(racing.slice(0, 11));
    expect(vi.getTimerCount()).toBe(1);
    releases[11]!();
    await racing[11];
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives another deadline its own timer, and a deadline reached again a new one', async () => {
    const first = withDeadline(never(), Date.now() + 10);
    const second = withDeadline(never(), Date.now() + 20);
    expect(vi.getTimerCount()).toBe(2);
    const outcomes = Promise.allSettled([first, second]);
    await vi.advanceTimersByTimeAsync(20);
    expect((await outcomes).map((o) => o.status)).toEqual(['rejected', 'rejected']);
    const late = withDeadline(never(), Date.now() - 5).catch((err: unknown) => (err as MemoryServiceError).code);
    await vi.advanceTimersByTimeAsync(0);
    expect(await late).toBe(ErrorCode.dependencyTimeout);
    expect(vi.getTimerCount()).toBe(0);
  });
});
