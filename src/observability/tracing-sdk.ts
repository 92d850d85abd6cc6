/**
 * The OpenTelemetry SDK half of the traces (docs/operations.md#traces), imported only when
 * OTEL_TRACES=otlp (./tracing `startTracing`) or by a test that installs its own exporter.
 */
import type { Attributes, Context } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type ReadableSpan, type Span, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { registerSpanProcessor } from './tracing';

export const TRACING_RESOURCE = new Resource({ 'service.name': 'jarvis-memory' });

/**
 * The attributes a span may leave the process with. The Temporal interceptors attach far more —
 * workflow ids (they hold the user's key), search attributes, memo, the whole workflow info —
 * and exceptions' messages, which can quote user text: all dropped here, for every span alike.
 * The run id stays (random, not personal): an operator finds the workflow by it.
 */
const KEPT_ATTRIBUTES = new Set([
  'http.request.method',
  'http.route',
  'http.response.status_code',
  'recall.route',
  'workflowType',
  'taskQueue',
  'attempt',
  'run_id',
  'runId',
  'exception.type',
]);

function keptAttributes(attributes: Attributes): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([k, v]) => KEPT_ATTRIBUTES.has(k) && (typeof v !== 'object' || v === null)));
}

/** A view of the span with only the kept attributes; an error status keeps its code, and its message only if it is an error's name. */
export function scrubbedSpan(span: ReadableSpan): ReadableSpan {
  const statusMessage = span.status.message && /^[a-z]\w{0,63}$/iu.test(span.status.message) ? span.status.message : undefined;
  return Object.create(span, {
    attributes: { value: keptAttributes(span.attributes) },
    events: { value: span.events.map((e) => ({ ...e, attributes: e.attributes && keptAttributes(e.attributes) })) },
    status: { value: { code: span.status.code, ...(statusMessage ? { message: statusMessage } : {}) } },
  }) as ReadableSpan;
}

class ScrubbingSpanProcessor implements SpanProcessor {
  constructor(private readonly inner: SpanProcessor) {}
  onStart(span: Span, parentContext: Context): void {
    this.inner.onStart(span, parentContext);
  }
  onEnd(span: ReadableSpan): void {
    this.inner.onEnd(scrubbedSpan(span));
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

let installed: NodeTracerProvider | undefined;

/**
 * Installs the process's tracer provider: OTLP over HTTP to `endpoint`, or the given exporter
 * (tests: an in-memory one, exported span by span). Once per process: the global provider can be
 * registered only once, and a test that installed its in-memory exporter first keeps it when the
 * runtime it builds asks for OTLP.
 */
export function installTracing(opts: { endpoint?: string; exporter?: SpanExporter }): NodeTracerProvider {
  if (installed) return installed;
  const processor = new ScrubbingSpanProcessor(
    opts.exporter ? new SimpleSpanProcessor(opts.exporter) : new BatchSpanProcessor(new OTLPTraceExporter(opts.endpoint ? { url: opts.endpoint } : {})),
  );
  const provider = new NodeTracerProvider({ resource: TRACING_RESOURCE, spanProcessors: [processor] });
  provider.register();
  installed = provider;
  registerSpanProcessor(processor);
  return provider;
}
