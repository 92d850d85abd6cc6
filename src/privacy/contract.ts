/**
 * The privacy capability's Temporal contract: what the purge route needs to start PurgeUser by
 * name — type name, id, input and result — without importing the workflow, whose activities
 * type-import the privacy use cases back. The name comes from the public Temporal contract
 * (`src/client/temporal-contract.ts`); test/capability-contracts.test.ts holds it equal to the bundle's.
 */
import { WorkflowType } from '../client/temporal-contract';
import type { PurgeCounts } from '../core/privacy/purge';

export { purgeWorkflowId } from '../core/privacy/purge';

export interface PurgeUserInput {
  /** The user key (as stored in every table). Only activity inputs carry it; results never do. */
  userKey: string;
  tenantId: string;
  /** Keyed reference of the user for the audit row (see purgeUserRef). */
  userRef: string;
  /** When the erasure was requested (ISO); default: the workflow's start. */
  requestedAt?: string;
}

export interface PurgeUserResult {
  tenantId: string;
  userRef: string;
  requestedAt: string;
  completedAt: string;
  counts: PurgeCounts;
}

/** Workflow type names, as the worker registers them. */
export const PrivacyWorkflows = { purgeUser: WorkflowType.purgeUser } as const;

export type PurgeUserWorkflow = (input: PurgeUserInput) => Promise<PurgeUserResult>;
