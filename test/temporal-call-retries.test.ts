import { defaultGrpcRetryOptions, type GrpcRetryOptions } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { retriesWithin } from '../src/stack/temporal-connection';

const UNAVAILABLE = { code: 14, details: 'connect ECONNREFUSED', metadata: {} } as never;
/** The other codes the SDK retries, one with a longer first backoff (RESOURCE_EXHAUSTED). */
const RETRIED = [UNAVAILABLE, ...[2, 8, 10, 11, 15].map((code) => ({ code, details: 'transient', metadata: {} }) as never)];
const INVALID_ARGUMENT = { code: 3, details: 'bad request', metadata: {} } as never;

/**
 * Plays a call that fails with `status` on every attempt, on a simulated clock starting at 0: the
 * time at which the caller gets the final failure, and the attempts made.
 */
function failingCall(retry: (now: () => number) => GrpcRetryOptions, status: never): { answeredAt: number; attempts: number } {
  let clock = 0;
  const options = retry(() => clock);
  let attempt = 1;
  while (options.retryableDecider(attempt, status)) {
    clock += options.delayFunction(attempt, status);
    attempt++;
  }
  return { answeredAt: clock, attempts: attempt };
}

describe('Temporal client retries under a call deadline', () => {
  it("the SDK's own backoff sleeps past a 5 s deadline against a refused port (the defect)", () => {
    const sdk = failingCall(() => defaultGrpcRetryOptions(), UNAVAILABLE);
    expect(sdk.answeredAt).toBeGreaterThan(5_000);
  });

  it('keeps retrying every code the SDK retries up to the deadline, and answers at it, never after', () => {
    for (const status of RETRIED) {
      for (const deadline of [50, 1_000, 5_000, 12_345]) {
        for (let run = 0; run < 20; run++) {
          const bounded = failingCall((now) => retriesWithin(defaultGrpcRetryOptions(), deadline, now), status);
          expect(bounded.answeredAt).toBe(deadline);
          expect(bounded.attempts).toBeGreaterThan(1);
        }
      }
    }
  });

  it('gives up as soon as the SDK would: a refusal is not retried, and attempts stay within its maximum', () => {
    expect(failingCall((now) => retriesWithin(defaultGrpcRetryOptions(), 5_000, now), INVALID_ARGUMENT)).toEqual({ answeredAt: 0, attempts: 1 });
    const long = failingCall((now) => retriesWithin(defaultGrpcRetryOptions(), 10 * 60_000, now), UNAVAILABLE);
    expect(long.attempts).toBe(10);
    expect(long.answeredAt).toBeLessThan(10 * 60_000);
  });

  it('does not retry a call whose deadline has passed', () => {
    const late = retriesWithin(defaultGrpcRetryOptions(), 1_000, () => 1_000);
    expect(late.retryableDecider(1, UNAVAILABLE)).toBe(false);
    expect(late.delayFunction(1, UNAVAILABLE)).toBe(0);
  });
});
