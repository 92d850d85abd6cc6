import { databaseErrorCode, ErrorCode, MemoryServiceError, type ErrorCode as Code } from '../core/errors';

/** One pending deadline: the timer every promise racing it shares, and how many still race it. */
interface Expiry {
  readonly expired: Promise<never>;
  readonly timer: NodeJS.Timeout;
  racing: number;
}

/*
 * The routes of one recall run against the same deadline. One timer per deadline, shared by every
 * promise racing it and cleared when the last settles: a timer per route was a dozen timers set
 * and cleared on every message.
 */
const expiries = new Map<number, Expiry>();

function expiryOf(deadline: number): Expiry {
  const known = expiries.get(deadline);
  if (known) return known;
  const ms = Math.max(0, deadline - Date.now());
  let fail: (err: Error) => void = () => {};
  const expired = new Promise<never>((_, reject) => (fail = reject));
  // Observed here: an expiry no promise races any more must not count as an unhandled rejection.
  expired.catch(() => {});
  const timer = setTimeout(() => {
    expiries.delete(deadline);
    fail(new MemoryServiceError(ErrorCode.dependencyTimeout, `route exceeded its ${ms} ms budget`, { budgetMs: ms }));
  }, ms);
  const expiry: Expiry = { expired, timer, racing: 0 };
  expiries.set(deadline, expiry);
  return expiry;
}

/**
 * `p`, or a `dependencyTimeout` {@link MemoryServiceError} once `deadline` (epoch ms) has passed:
 * a route that ran out of time fails with the same error base as every other failure.
 */
export function withDeadline<T>(p: Promise<T>, deadline: number): Promise<T> {
  const expiry = expiryOf(deadline);
  expiry.racing++;
  const settled = () => {
    if (--expiry.racing === 0 && expiries.get(deadline) === expiry) {
      clearTimeout(expiry.timer);
      expiries.delete(deadline);
    }
  };
  return new Promise<T>((resolve, reject) => {
    p.then(
      (v) => {
        settled();
        resolve(v);
      },
      (e: unknown) => {
        settled();
        reject(e);
      },
    );
    expiry.expired.catch(reject);
  });
}

/** The machine-readable code a failed route reports. */
export function errorCodeOf(err: unknown): Code {
  if (err instanceof MemoryServiceError) return err.code;
  return databaseErrorCode(err) ?? ErrorCode.internal;
}
