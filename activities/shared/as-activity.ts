import { toActivityFailure } from './failures';

/**
 * Runs one activity body through the one failure boundary (activities/shared/failures.ts): for the
 * activities whose factory is not wrapped by `withTypedFailures` as a whole.
 */
export async function asActivity<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toActivityFailure(err);
  }
}
