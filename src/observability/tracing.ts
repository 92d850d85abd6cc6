/**
 * OpenTelemetry traces (docs/operations.md#metrics-and-traces): off unless OTEL_TRACES=otlp. With
 * no provider installed, `tracer` is the API's no-op tracer, so the spans in the code cost nothing.
 *
 * Span attributes follow the label rule of the metrics: closed sets only (route names), never a
 * user id, user key, tenant id or text.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export const tracer = trace.getTracer('jarvis-memory');

/**
 * Installs the process's tracer provider: OTLP over HTTP to `endpoint`, or the given exporter
 * (tests: an in-memory one, exported span by span).
 */
export function installTracing(opts: { endpoint?: string; exporter?: SpanExporter }): NodeTracerProvider {
  const processor = opts.exporter ? new SimpleSpanProcessor(opts.exporter) : new BatchSpanProcessor(new OTLPTraceExporter(opts.endpoint ? { url: opts.endpoint } : {}));
  const provider = new NodeTracerProvider({ resource: new Resource({ 'service.name': 'jarvis-memory' }), spanProcessors: [processor] });
  provider.register();
  return provider;
}

/** Runs `fn` in an active span named `name`; a throw marks the span failed and passes through. */
export function inSpan<T>(name: string, attributes: Record<string, string>, fn: () => Promise<T>): Promise<T> {
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
