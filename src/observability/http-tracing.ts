/**
 * The server span of each HTTP request (docs/operations.md#traces), the parent of everything the
 * request does — recall route spans, the start or signal of a workflow. A caller's W3C
 * `traceparent` is honoured: the request joins the caller's trace.
 *
 * A small hook rather than `@fastify/otel` or `@opentelemetry/instrumentation-http`: both need the
 * 2.x SDK line, and the Temporal interceptors hold this service at the 1.x SDK with API 1.9.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tracer } from './tracing';

const spans = new WeakMap<FastifyRequest, { span: Span; ctx: Context }>();

/**
 * Attributes are the method, the route template (never the path: it holds user ids) and the
 * status code — closed sets.
 */
export function installHttpTracing(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const route = request.routeOptions.url ?? 'unmatched';
    const span = tracer.startSpan(`${request.method} ${route}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route } }, parent);
    const ctx = trace.setSpan(parent, span);
    spans.set(request, { span, ctx });
    context.with(ctx, done);
  });
  // The body arrives on the socket's events, outside the onRequest hook's context: the handler
  // (and the hooks before it) re-enter the request's.
  app.addHook('preValidation', (request, _reply, done) => {
    const entry = spans.get(request);
    if (entry) context.with(entry.ctx, done);
    else done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const entry = spans.get(request);
    if (entry) {
      entry.span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) entry.span.setStatus({ code: SpanStatusCode.ERROR });
      entry.span.end();
      spans.delete(request);
    }
    done();
  });
}
