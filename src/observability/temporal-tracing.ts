/**
 * The Temporal half of the traces (docs/operations.md#traces): the client interceptor carries the
 * caller's span context into the workflows it starts and signals; the worker continues it in the
 * workflow (workflows/shared/trace-interceptors.ts, in the bundle), the activities, and exports the
 * workflow's spans through a sink to this process's span processor.
 */
import type { ClientInterceptors } from '@temporalio/client';
import { OpenTelemetryActivityInboundInterceptor, OpenTelemetryWorkflowClientInterceptor, makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { installedSpanProcessor, TRACING_RESOURCE } from './tracing';

/** The client's interceptors, with the tracing one added after `base`'s when traces are on. */
export function tracedClientInterceptors(base: ClientInterceptors, traces: boolean): ClientInterceptors {
  if (!traces) return base;
  return { ...base, workflow: [...(Array.isArray(base.workflow) ? base.workflow : []), new OpenTelemetryWorkflowClientInterceptor()] };
}

/**
 * The activity interceptors of a worker: the span of each activity, under the workflow's, when
 * traces are on. Only activities of traced workflows (whose headers carry the span context): those
 * of the scheduled sweeps and reconcilers would each be a trace of one span, every few seconds.
 */
export function tracedActivityInterceptors(base: ActivityInterceptorsFactory[], traces: boolean): ActivityInterceptorsFactory[] {
  if (!traces) return base;
  return [
    ...base,
    (ctx) => {
      const otel = new OpenTelemetryActivityInboundInterceptor(ctx);
      return { inbound: { execute: (input, next) => (TRACE_HEADER in input.headers ? otel.execute(input, next) : next(input)) } };
    },
  ];
}

/**
 * The `exporter` sink the traced workflows call. Registered on every worker, traces on or off: a
 * workflow started by a tracing API process may run on a worker with traces off, and an
 * unregistered sink is an error there; such spans are dropped.
 */
export function workflowSpanSinks(): InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }> {
  const processor = installedSpanProcessor();
  if (processor) return { exporter: makeWorkflowExporter(processor, TRACING_RESOURCE) };
  return { exporter: { export: { fn: () => undefined } } };
}
