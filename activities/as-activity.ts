import { ApplicationFailure } from '@temporalio/activity';
import { ErrorCode, MemoryServiceError } from '../src/core/errors';

/** Business refusals must not be retried; everything else (network, pg, 5xx) is transient. */
const NON_RETRYABLE: ReadonlySet<string> = new Set([ErrorCode.validationFailed, ErrorCode.notFound, ErrorCode.forbidden, ErrorCode.invalidState]);

/** Runs an activity body, turning a business refusal into a non-retryable Temporal failure. */
export async function asActivity<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof MemoryServiceError && NON_RETRYABLE.has(err.code)) {
      throw ApplicationFailure.create({ message: err.message, type: err.code, nonRetryable: true, details: [err.context], cause: err });
    }
    throw err;
  }
}
