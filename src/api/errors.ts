import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ErrorCode, httpStatusFor, MemoryServiceError } from '../core/errors';

/** Every error leaves the API as `{error: {code, message, details?}}` with the status of its code. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof MemoryServiceError) {
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
      return reply.status(413).send({ error: { code: ErrorCode.payloadTooLarge, message: 'request body too large' } });
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
