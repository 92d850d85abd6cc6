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
  /** Too many of one caller's long-lived requests (exports, event streams) are open; the answer carries Retry-After. */
  concurrencyLimited: 'concurrency_limited',
  /** A proxied request names a field, model or value its tenant's proxy policy does not let through. */
  fieldNotAllowed: 'field_not_allowed',
  /** The proxy's upstream refused or failed the request (its body is not passed on). */
  upstreamFailed: 'upstream_failed',
  /** The proxy's upstream is rate limited or overloaded: retry later. */
  upstreamUnavailable: 'upstream_unavailable',
  invalidState: 'invalid_state',
  /** A directly written memory that extraction's provenance screen would refuse (quoted, reported, not the user's instruction). */
  provenanceRefused: 'provenance_refused',
  /**
   * A request id (or a message id) sent again with a different body: the first request's work
   * stands, and answering with it would tell the client its second request was done.
   */
  requestIdReused: 'request_id_reused',
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
  concurrency_limited: 429,
  field_not_allowed: 400,
  upstream_failed: 502,
  upstream_unavailable: 503,
  invalid_state: 409,
  provenance_refused: 422,
  request_id_reused: 422,
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

/**
 * The code of an error a PostgreSQL client raised because the database was out of reach, or
 * undefined for any other error. A connection refused, reset or terminated (the server shut down
 * or restarted, an operator's pg_terminate_backend), or no pooled connection within the pool's
 * connect timeout (a server that hangs), is `databaseUnavailable`; a statement
 * cancelled by its timeout is `dependencyTimeout`. Without this a database outage surfaced as
 * `internal_error` (a bug) instead of a dependency that is down.
 */
export function databaseErrorCode(err: unknown): ErrorCode | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, syscall, message } = err as { code?: unknown; syscall?: unknown; message?: unknown };
  if (code === '57014') return ErrorCode.dependencyTimeout; // query_canceled: statement_timeout
  // SQLSTATE class 08 (connection exception); 57P01–57P03: admin shutdown, crash shutdown, cannot connect now.
  if (typeof code === 'string' && /^(08[0-9A-Z]{3}|57P0[1-3])$/.test(code)) return ErrorCode.databaseUnavailable;
  if (syscall === 'connect' && (code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || code === 'ECONNRESET')) return ErrorCode.databaseUnavailable;
  if (typeof message === 'string' && /^Connection terminated( unexpectedly| due to connection timeout)?$/.test(message)) return ErrorCode.databaseUnavailable;
  // pg-pool's own connectionTimeoutMillis: no client freed up or connected in time (every pooled
  // client stuck on a server that stopped answering, or new connects that hang). Also an outage.
  if (typeof message === 'string' && message === 'timeout exceeded when trying to connect') return ErrorCode.databaseUnavailable;
  // pg's client-side query_timeout: the server took the statement and never answered in time (it
  // hangs, or the network between dropped packets without a reset). statement_timeout cannot fire
  // on a server that is not running.
  if (typeof message === 'string' && message === 'Query read timeout') return ErrorCode.dependencyTimeout;
  return undefined;
}

/**
 * Whether PostgreSQL rolled a transaction back to break a deadlock (40P01). The transaction did
 * nothing, so running it again is safe when its work only touches the database.
 */
export function isDeadlock(err: unknown): boolean {
  return sqlState(err) === '40P01';
}

/**
 * Whether an error is a PostgreSQL foreign-key violation (23503), raw or inside the conflict the
 * pool turns it into (src/adapters/postgres/pool.ts, `userGoneAsConflict`). A delete of a user's
 * rows meets it when a write committed a row that still references them.
 */
export function isForeignKeyViolation(err: unknown): boolean {
  return sqlState(err) === '23503';
}

/** The SQLSTATE of a PostgreSQL error, raw or wrapped by the pool in a service error. */
function sqlState(err: unknown): unknown {
  const cause = err instanceof MemoryServiceError ? err.cause : err;
  return typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
}

/**
 * Whether a PostgreSQL error is a foreign key to `users` that found no user: the user was purged
 * (DELETE /v1/users/{userId}) between the request's registration check and its write. The write's
 * transaction rolled back, so nothing was stored; it is a race with the erasure, not a bug.
 */
export function isUserGoneViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, detail, constraint } = err as { code?: unknown; detail?: unknown; constraint?: unknown };
  if (code !== '23503') return false;
  // The constraint's name does not depend on the server's lc_messages; the detail text does (a
  // managed server may speak another language). Every foreign key to users is <table>_user_id_fkey.
  return (typeof constraint === 'string' && /_user_id_fkey$/u.test(constraint)) || (typeof detail === 'string' && /is not present in table "users"/u.test(detail));
}
