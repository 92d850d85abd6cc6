import { ErrorCode, MemoryServiceError, type ErrorCode as Code } from '../core/errors';

/** A recall route that did not answer within the request's deadline. */
export class RouteTimeout extends Error {}

/** `p`, or a {@link RouteTimeout} rejection once `deadline` (epoch ms) has passed. */
export function withDeadline<T>(p: Promise<T>, deadline: number): Promise<T> {
  const ms = Math.max(0, deadline - Date.now());
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new RouteTimeout(`route exceeded its ${ms} ms budget`)), ms);
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
  if (err instanceof RouteTimeout) return ErrorCode.dependencyTimeout;
  if (err instanceof MemoryServiceError) return err.code;
  return ErrorCode.internal;
}
