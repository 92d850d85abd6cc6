/**
 * The parts of the Temporal tracing that load `@temporalio/interceptors-opentelemetry` (and the
 * OpenTelemetry SDK through ./tracing-sdk): imported by ./temporal-tracing `startTracing` only when
 * traces are on.
 */
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { OpenTelemetryActivityInboundInterceptor, OpenTelemetryWorkflowClientInterceptor, makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { TRACING_RESOURCE } from './tracing-sdk';

export const workflowClientInterceptor = () => new OpenTelemetryWorkflowClientInterceptor();

/** The span of each activity of a traced workflow (whose headers carry the span context); others run untouched. */
export const activityInterceptor: ActivityInterceptorsFactory = (ctx) => {
  const otel = new OpenTelemetryActivityInboundInterceptor(ctx);
  return { inbound: { execute: (input, next) => (TRACE_HEADER in input.headers ? otel.execute(input, next) : next(input)) } };
};

export function workflowExporterSink(processor: SpanProcessor): InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }> {
  return { exporter: makeWorkflowExporter(processor, TRACING_RESOURCE) };
}
