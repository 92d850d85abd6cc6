import { databaseErrorCode, ErrorCode, MemoryServiceError, type ErrorCode as Code } from '../core/errors';

/**
 * `p`, or a `dependencyTimeout` {@link MemoryServiceError} once `deadline` (epoch ms) has passed:
 * a route that ran out of time fails with the same error base as every other failure.
 */
export function withDeadline<T>(p: Promise<T>, deadline: number): Promise<T> {
  const ms = Math.max(0, deadline - Date.now());
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new MemoryServiceError(ErrorCode.dependencyTimeout, `route exceeded its ${ms} ms budget`, { budgetMs: ms })), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** The machine-readable code a failed route reports. */
export function errorCodeOf(err: unknown): Code {
  if (err instanceof MemoryServiceError) return err.code;
  return databaseErrorCode(err) ?? ErrorCode.internal;
}
