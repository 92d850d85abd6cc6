/**
 * OpenTelemetry traces (docs/operations.md#traces): off unless OTEL_TRACES=otlp. With no provider
 * installed, `tracer` is the API's no-op tracer, so the spans in the code cost nothing.
 *
 * Span attributes follow the label rule of the metrics: closed sets only (route names), never a
 * user id, user key, tenant id or text.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

export const tracer = trace.getTracer('jarvis-memory');

/**
 * The SDK (provider, exporter) lives in ./tracing-sdk and the Temporal interceptors in
 * ./temporal-tracing-sdk, imported only when traces are on (./temporal-tracing `startTracing`): loading it cost every worker start about 0.2 s with tracing off
 * (docs/benchmarks.md, "Worker restart"). What the rest of the code needs while tracing is off —
 * the no-op tracer, `inSpan`, the flush — stays here, free of it.
 */
let processor: SpanProcessor | undefined;

/** Called by ./tracing-sdk once it installed the provider. */
export function registerSpanProcessor(p: SpanProcessor): void {
  processor = p;
}

/**
 * The processor the workflows' spans go to (through the worker's sink): the process's own, so they
 * leave by the same exporter as the rest. Undefined while tracing is off.
 */
export function installedSpanProcessor(): SpanProcessor | undefined {
  return processor;
}

/** Sends the spans still batched (a stopping process would lose them); nothing while tracing is off. */
export async function flushTracing(): Promise<void> {
  await processor?.forceFlush();
}

/** Runs `fn` in an active span named `name`; a throw marks the span failed and passes through. */
export function inSpan<T>(name: string, attributes: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  // With tracing off there is no span to make: the no-op tracer's context and wrapper were an
  // async function and a promise more per recall route, on every message.
  if (!processor) {
    try {
      return fn();
    } catch (err) {
      return Promise.reject(err);
    }
  }
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  });
}
