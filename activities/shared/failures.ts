/**
 * The activity side of the failure boundary: a {@link MemoryServiceError} leaves an activity as an
 * `ApplicationFailure` whose `type` is the error's code, so the workflow's retry policy and, at
 * the end of the chain, the API (src/api/workflow-failures.ts) read what went wrong instead of
 * guessing from a message.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { ErrorCode, MemoryServiceError } from '../../src/core/errors';

/**
 * Refusals that no retry can turn into a success: the input, the record or its state is wrong.
 * Everything else (a dependency down or slow, a bug) is retried under the workflow's policy.
 */
export const NON_RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  ErrorCode.validationFailed,
  ErrorCode.malformedJson,
  ErrorCode.unauthorized,
  ErrorCode.forbidden,
  ErrorCode.notFound,
  ErrorCode.conflict,
  ErrorCode.invalidState,
  ErrorCode.payloadTooLarge,
  // A refused write (memory_add with text alone, screened after the type is inferred) stays refused.
  ErrorCode.provenanceRefused,
  // The same id with another body is refused the same way on every attempt.
  ErrorCode.requestIdReused,
]);

/** How long the failing dependency asked us to wait, when it said (`retryAfterMs` / `retryAfterSeconds`). */
function retryDelayMs(context: Readonly<Record<string, unknown>>): number | undefined {
  const ms = context.retryAfterMs;
  if (typeof ms === 'number' && Number.isFinite(ms) && ms > 0) return ms;
  const seconds = context.retryAfterSeconds;
  if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0) return seconds * 1000;
  return undefined;
}

/**
 * The failure an activity throws for `err`: a typed `ApplicationFailure` for a
 * {@link MemoryServiceError} (non-retryable for refusals, retryable with the dependency's own
 * delay when it gave one), anything else unchanged — an `ApplicationFailure` already says what it
 * means, and a raw error (a dropped connection) is retried by Temporal's default.
 */
export function toActivityFailure(err: unknown): unknown {
  if (!(err instanceof MemoryServiceError)) return err;
  const delay = NON_RETRYABLE_CODES.has(err.code) ? undefined : retryDelayMs(err.context);
  return ApplicationFailure.create({
    message: err.message,
    type: err.code,
    nonRetryable: NON_RETRYABLE_CODES.has(err.code),
    details: [err.context],
    cause: err,
    ...(delay !== undefined ? { nextRetryDelay: delay } : {}),
  });
}

// Activity functions take any arguments; `never[]` accepts every signature under strict typing.
type ActivityMap = Record<string, (...args: never[]) => Promise<unknown>>;

/**
 * Wraps every activity of a factory's result so each one fails through {@link toActivityFailure}.
 * Applied to the object a `create*Activities` returns, so no activity can be added without it.
 */
export function withTypedFailures<T extends ActivityMap>(activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn.apply(activities, args);
      } catch (err) {
        throw toActivityFailure(err);
      }
    };
  }
  return wrapped as T;
}
