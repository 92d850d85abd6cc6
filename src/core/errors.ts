/**
 * One error base for the service. Codes are machine-readable and map to HTTP statuses in one
 * place (`httpStatusFor`), so every layer speaks the same language about what went wrong.
 */
export const ErrorCode = {
  validationFailed: 'validation_failed',
  malformedJson: 'malformed_json',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  notFound: 'not_found',
  conflict: 'conflict',
  payloadTooLarge: 'payload_too_large',
  /** A rate-limit budget is spent for now; the answer carries Retry-After. */
  rateLimited: 'rate_limited',
  invalidState: 'invalid_state',
  dependencyTimeout: 'dependencyTimeout',
  vectorStoreUnavailable: 'vectorStoreUnavailable',
  databaseUnavailable: 'databaseUnavailable',
  embedderUnavailable: 'embedderUnavailable',
  workflowUnavailable: 'workflowUnavailable',
  /** The configured chat model failed or is not configured (query rewrite). */
  llmUnavailable: 'llmUnavailable',
  internal: 'internal_error',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export class MemoryServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly context: Readonly<Record<string, unknown>> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MemoryServiceError';
  }
}

const STATUS: Record<ErrorCode, number> = {
  validation_failed: 400,
  malformed_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  invalid_state: 409,
  dependencyTimeout: 504,
  vectorStoreUnavailable: 503,
  databaseUnavailable: 503,
  embedderUnavailable: 503,
  workflowUnavailable: 503,
  llmUnavailable: 503,
  internal_error: 500,
};

export function httpStatusFor(code: ErrorCode): number {
  return STATUS[code];
}
