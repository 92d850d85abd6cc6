/**
 * The memory capability's Temporal contract: what a caller needs to start StoreMemory, signal the
 * user's recall-reinforcement workflow or run a MemoryDecision by name — type names, ids, signals
 * and the input/result types — without importing the workflows, whose activities type-import the
 * use cases back (that closed the import circle through `workflows/index.ts`).
 *
 * Names come from the public Temporal contract (`src/client/temporal-contract.ts`); the workflows
 * take their signal and inputs from here and re-export them, so the bundle and the recorded
 * histories are unchanged (test/memory-contract.test.ts holds them equal).
 */
import { defineSignal } from '@temporalio/workflow';
import { WorkflowType } from '../client/temporal-contract';
import type { AppliedDecision } from '../core/dto';
import type { MemoryType, MemoryVia } from '../core/types';

export interface StoreMemoryInput {
  userId: string;
  requestId: string;
  text: string;
  /** Absent: the extractor infers type, scope, importance and keywords from the text (src/memory/memory-inference.ts). */
  type?: MemoryType;
  scope?: 'global' | 'task';
  confidence?: number;
  importance?: number;
  keywords?: string[];
  metadata?: Record<string, unknown>;
  expiresAt?: string;
  /** When it was said (ISO); defaults to the request time. */
  at: string;
  /** Who wrote it directly: a chat app with the tenant key (`api`, the default) or an agent over MCP. */
  via?: Exclude<MemoryVia, 'extraction'>;
  /**
   * What the request asked for, canonically hashed (src/memory/store-request.ts). Recorded with the
   * decision: a later run under the same request id with another fingerprint is refused
   * (`request_id_reused`) instead of replaying the first decision as if it were its own. Absent
   * in runs started before it existed: those replay unchecked.
   */
  requestFingerprint?: string;
}

/** The memo key under which a StoreMemory run carries its input's `requestFingerprint`, for a request that joins the run to compare. */
export const STORE_REQUEST_MEMO_KEY = 'requestFingerprint';

export interface MemoriesRecalledInput {
  memoryIds: string[];
  /** When the recall happened (ISO). */
  at: string;
}

export interface RecallReinforcementInput {
  userId: string;
  /** Flush at most this often, so a chatty user costs one activity per window, not per message. */
  flushSeconds: number;
  /** Signals carried over from the previous run (continue-as-new). */
  pending?: MemoriesRecalledInput[];
  batchesApplied?: number;
}

/** A decision the API takes about one memory on request: forget (soft delete), restore, erase (hard delete), confirm (a pending memory becomes the user's). */
export type MemoryDecisionAction = 'forget' | 'restore' | 'erase' | 'confirm';

export interface MemoryDecisionInput {
  /** The user key (`MemoryUserId`). */
  userKey: string;
  memoryId: string;
  action: MemoryDecisionAction;
  /** Who asked: `api` for the HTTP API, `page` for the memory page (the audit event's actor). */
  actor: string;
  /** When it was asked (ISO): the decision's time in the audit trail. */
  requestedAt: string;
}

export type MemoryDecisionOutcome =
  | { action: 'forget'; memoryId: string; changed: boolean; vectorRemoved: boolean }
  | { action: 'restore'; memoryId: string; vectorSynced: boolean }
  | { action: 'erase'; memoryId: string; removed: Record<string, number>; vectorRemoved: boolean; conversations: string[]; episodesRebuilt: boolean }
  | { action: 'confirm'; memoryId: string; changed: boolean };

/** The workflow's result: the decision applied, or the refusal (unknown memory, wrong status) with the API's error code. */
export interface MemoryDecisionResult {
  action: MemoryDecisionAction;
  memoryId: string;
  applied: boolean;
  outcome?: MemoryDecisionOutcome;
  refusal?: { code: string; message: string; details?: Record<string, unknown> };
}

/** Workflow type names, as the worker registers them. */
export const MemoryWorkflows = {
  store: WorkflowType.storeMemory,
  recallReinforcement: WorkflowType.recallReinforcement,
  decision: WorkflowType.memoryDecision,
} as const;

/** The workflows' signatures, for typed starts by name. */
export type StoreMemoryWorkflow = (input: StoreMemoryInput) => Promise<AppliedDecision>;
export type RecallReinforcementWorkflow = (input: RecallReinforcementInput) => Promise<void>;
export type MemoryDecisionWorkflow = (input: MemoryDecisionInput) => Promise<MemoryDecisionResult>;

export const memoriesRecalledSignal = defineSignal<[MemoriesRecalledInput]>('memoriesRecalledSignal');

export function reinforcementWorkflowId(userId: string): string {
  return `reinforce:${userId}`;
}
