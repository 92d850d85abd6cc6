import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
// The header the Temporal OpenTelemetry interceptors carry the span context in.
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import type {
  ActivityInput,
  ContinueAsNewInput,
  DisposeInput,
  GetLogAttributesInput,
  LocalActivityInput,
  Next,
  QueryInput,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptorsFactory,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import type { Payload } from '@temporalio/common';


/**
 * Tracing inside workflows (docs/operations.md#traces), bundled through `workflowInterceptorModules`.
 *
 * The bundle is built once for every worker, traces on or off, so the decision is made per
 * workflow from its history, never from the worker's configuration: a workflow is traced when the
 * call that started it (or a signal it received) carries a span context — which only a client with
 * traces on sends. With traces off no header arrives and every call goes straight to `next`: the
 * commands, and so the recorded histories, are exactly those of a bundle without tracing (the
 * library's own interceptors add yields and headers, which would not replay histories recorded
 * before it). Headers are part of the history, so a replay decides the same way.
 */
class TraceState {
  traced = false;
  private lib?: { inbound: OpenTelemetryInboundInterceptor; outbound: OpenTelemetryOutboundInterceptor; internals: OpenTelemetryInternalsInterceptor };

  /** Built on the first traced call only: its constructor installs a tracer provider in the sandbox. */
  get otel(): NonNullable<TraceState['lib']> {
    this.lib ??= { inbound: new OpenTelemetryInboundInterceptor(), outbound: new OpenTelemetryOutboundInterceptor(), internals: new OpenTelemetryInternalsInterceptor() };
    return this.lib;
  }

  get built(): boolean {
    return this.lib !== undefined;
  }

  /** Whether this inbound call carries a span context; once one did, the workflow's outbound calls are traced. */
  notice(headers: Record<string, Payload>): boolean {
    const carries = TRACE_HEADER in headers;
    if (carries) this.traced = true;
    return carries;
  }
}

class TracingInbound implements WorkflowInboundCallsInterceptor {
  constructor(private readonly state: TraceState) {}

  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    return this.state.notice(input.headers) ? this.state.otel.inbound.execute(input, next) : next(input);
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    return this.state.notice(input.headers) ? this.state.otel.inbound.handleSignal(input, next) : next(input);
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    return this.state.notice(input.headers) ? this.state.otel.inbound.handleUpdate(input, next) : next(input);
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    // A validator's span context says nothing of the workflow's: it does not turn tracing on.
    if (TRACE_HEADER in input.headers) this.state.otel.inbound.validateUpdate(input, next);
    else next(input);
  }

  handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>): Promise<unknown> {
    // Queries are not in the history: they must not change what later calls do.
    return TRACE_HEADER in input.headers ? this.state.otel.inbound.handleQuery(input, next) : next(input);
  }
}

class TracingOutbound implements WorkflowOutboundCallsInterceptor {
  constructor(private readonly state: TraceState) {}

  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    return this.state.traced ? this.state.otel.outbound.scheduleActivity(input, next) : next(input);
  }

  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>): Promise<unknown> {
    return this.state.traced ? this.state.otel.outbound.scheduleLocalActivity(input, next) : next(input);
  }

  startChildWorkflowExecution(input: StartChildWorkflowExecutionInput, next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>): Promise<[Promise<string>, Promise<unknown>]> {
    return this.state.traced ? this.state.otel.outbound.startChildWorkflowExecution(input, next) : next(input);
  }

  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>): Promise<never> {
    return this.state.traced ? this.state.otel.outbound.continueAsNew(input, next) : next(input);
  }

  signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>): Promise<void> {
    return this.state.traced ? this.state.otel.outbound.signalWorkflow(input, next) : next(input);
  }

  getLogAttributes(input: GetLogAttributesInput, next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>): Record<string, unknown> {
    return this.state.traced ? this.state.otel.outbound.getLogAttributes(input, next) : next(input);
  }
}

class TracingInternals implements WorkflowInternalsInterceptor {
  constructor(private readonly state: TraceState) {}

  dispose(input: DisposeInput, next: Next<WorkflowInternalsInterceptor, 'dispose'>): void {
    if (this.state.built) void this.state.otel.internals.dispose(input, next);
    else next(input);
  }
}

/** One state per workflow execution: the factory runs once for each. */
export const interceptors: WorkflowInterceptorsFactory = () => {
  const state = new TraceState();
  return { inbound: [new TracingInbound(state)], outbound: [new TracingOutbound(state)], internals: [new TracingInternals(state)] };
};
