/**
 * The Temporal half of the traces (docs/operations.md#traces): the client interceptor carries the
 * caller's span context into the workflows it starts and signals; the worker continues it in the
 * workflow (workflows/shared/trace-interceptors.ts, in the bundle), the activities, and exports the
 * workflow's spans through a sink to this process's span processor.
 *
 * With traces off nothing of the SDK is loaded (it cost every worker start about 0.2 s,
 * docs/benchmarks.md "Worker restart"): `startTracing` imports it, and the functions below add
 * their interceptors only after it ran.
 */
import type { ClientInterceptors } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { installedSpanProcessor } from './tracing';

let sdk: typeof import('./temporal-tracing-sdk') | undefined;

/** Imports the SDK and installs the process's tracer provider (OTLP over HTTP to `endpoint`), once per process. */
export async function startTracing(opts: { endpoint?: string }): Promise<void> {
  const [tracing, temporal] = await Promise.all([import('./tracing-sdk'), import('./temporal-tracing-sdk')]);
  tracing.installTracing(opts);
  sdk = temporal;
}

function loadedSdk(): typeof import('./temporal-tracing-sdk') {
  if (!sdk) throw new Error('traces are on but startTracing() has not run in this process');
  return sdk;
}

/** The client's interceptors, with the tracing one added after `base`'s when traces are on. */
export function tracedClientInterceptors(base: ClientInterceptors, traces: boolean): ClientInterceptors {
  if (!traces) return base;
  return { ...base, workflow: [...(Array.isArray(base.workflow) ? base.workflow : []), loadedSdk().workflowClientInterceptor()] };
}

/**
 * The activity interceptors of a worker: the span of each activity, under the workflow's, when
 * traces are on. Only activities of traced workflows (whose headers carry the span context): those
 * of the scheduled sweeps and reconcilers would each be a trace of one span, every few seconds.
 */
export function tracedActivityInterceptors(base: ActivityInterceptorsFactory[], traces: boolean): ActivityInterceptorsFactory[] {
  if (!traces) return base;
  return [...base, loadedSdk().activityInterceptor];
}

/**
 * The `exporter` sink the traced workflows call. Registered on every worker, traces on or off: a
 * workflow started by a tracing API process may run on a worker with traces off, and an
 * unregistered sink is an error there; such spans are dropped.
 */
export function workflowSpanSinks(): InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }> {
  const processor = installedSpanProcessor();
  if (processor && sdk) return sdk.workflowExporterSink(processor);
  return { exporter: { export: { fn: () => undefined } } };
}
