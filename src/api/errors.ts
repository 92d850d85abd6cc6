import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WorkflowFailedError } from '@temporalio/client';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { databaseErrorCode, ErrorCode, httpStatusFor, isUserGoneViolation, MemoryServiceError } from '../core/errors';
import { API_SECURITY_HEADERS } from './page-session';
import { workflowCallError } from './workflow-failures';

/** Every error leaves the API as `{error: {code, message, details?}}` with the status of its code. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((thrown: FastifyError, request, reply) => {
    // A workflow failure a route let through answers with the status of the failure's type, as the
    // routes that catch it do.
    const err = thrown instanceof WorkflowFailedError ? workflowCallError(thrown, { failed: 'the workflow failed' }) : thrown;
    // PostgreSQL out of reach is a dependency down (503, retry later), not a bug.
    const dbCode = databaseErrorCode(err);
    if (dbCode) return reply.status(httpStatusFor(dbCode)).send({ error: { code: dbCode, message: dbCode === ErrorCode.dependencyTimeout ? 'PostgreSQL statement timed out' : 'PostgreSQL unavailable' } });
    // The user was erased while this request ran: its write rolled back (409, as a workflow the
    // purge stopped answers), not a 500 with a stack trace.
    if (isUserGoneViolation(err)) {
      return reply.status(409).send({ error: { code: ErrorCode.conflict, message: 'the user was erased while this request ran; nothing was stored: send it again to register the user anew', details: { reason: 'user_purged' } } });
    }
    if (err instanceof MemoryServiceError) {
      // A spent rate-limit budget says when to come back (RFC 9110 Retry-After, in seconds).
      if ((err.code === ErrorCode.rateLimited || err.code === ErrorCode.concurrencyLimited || err.code === ErrorCode.upstreamUnavailable) && typeof err.context.retryAfterSeconds === 'number') reply.header('retry-after', String(err.context.retryAfterSeconds));
      return reply.status(httpStatusFor(err.code)).send({ error: { code: err.code, message: err.message, details: err.context } });
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      return reply.status(400).send({
        error: {
          code: ErrorCode.validationFailed,
          message: `invalid ${err.validationContext ?? 'request'}`,
          details: err.validation.map((v) => ({ path: v.instancePath, message: v.message })),
        },
      });
    }
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || (err instanceof SyntaxError && err.statusCode === 400)) {
      return reply.status(400).send({ error: { code: ErrorCode.malformedJson, message: 'request body is not valid JSON' } });
    }
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      const limitBytes = request.routeOptions.bodyLimit;
      return reply.status(413).send({ error: { code: ErrorCode.payloadTooLarge, message: `request body too large${limitBytes ? `: this route takes at most ${limitBytes} bytes` : ''}`, details: { limitBytes } } });
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.status(415).send({ error: { code: ErrorCode.validationFailed, message: 'content-type must be application/json' } });
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.status(err.statusCode).send({ error: { code: ErrorCode.validationFailed, message: err.message } });
    }
    request.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ error: { code: ErrorCode.internal, message: 'internal error' } });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ error: { code: ErrorCode.notFound, message: `no route ${request.method} ${request.url.split('?')[0]}` } }),
  );
}

/**
 * Errors the router raises before any route runs (Fastify's `frameworkErrors`), in the same JSON
 * shape and without echoing the URL back: a malformed percent-encoding, and a path parameter
 * longer than the router takes (ids are validated, with their own message, up to that length).
 */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const message =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'an id in the path is too long' : err.code === 'FST_ERR_BAD_URL' ? 'the path is not validly percent-encoded' : 'invalid request';
  // Before any hook ran: the security headers every other answer gets from its onRequest hook.
  void reply.headers(API_SECURITY_HEADERS).status(400).send({ error: { code: ErrorCode.validationFailed, message } });
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (a malformed request line or
 * header, headers over the size limit, a request that timed out), in the API's error shape and
 * with the security headers every answer carries. Fastify's default answered
 * `{"error":"Bad Request","message":"Client Error","statusCode":400}`.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, ErrorCode.validationFailed, 'the request was not received in time']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, ErrorCode.payloadTooLarge, 'request headers too large']
        : [400, ErrorCode.validationFailed, 'malformed HTTP request'];
  const body = JSON.stringify({ error: { code, message } });
  if (socket.writable) {
    const headers = Object.entries(API_SECURITY_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${headers}connection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}
