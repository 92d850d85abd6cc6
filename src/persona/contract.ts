/**
 * The persona capability's Temporal contract: what a caller needs to signal-with-start the user's
 * RebuildPersona workflow by name (type name, id, signal, input), without importing the workflow,
 * whose activities type-import the use cases back. Names come from the public Temporal contract
 * (`src/client/temporal-contract.ts`); a unit test holds them equal to the bundle's.
 */
import { defineSignal } from '@temporalio/workflow';
import { SignalName, WorkflowType } from '../client/temporal-contract';

export interface RebuildPersonaInput {
  userKey: string;
  /** How long to wait after a change for the burst it belongs to to end. */
  debounceSeconds: number;
}

/** Workflow type names, as the worker registers them. */
export const PersonaWorkflows = { rebuild: WorkflowType.persona } as const;

/** The workflow's signature for a typed start by name; its result is the workflow's own (see workflows/persona/persona.ts). */
export type RebuildPersonaWorkflow = (input: RebuildPersonaInput) => Promise<unknown>;

/** The user's memories changed (sent after the transaction that changed them committed). */
export const memoriesChangedSignal = defineSignal(SignalName.memoriesChanged);

export function personaWorkflowId(userKey: string): string {
  return `persona:${userKey}`;
}
