/**
 * The conversation capability's Temporal contract: what a caller needs to start or signal its
 * workflows by name — workflow type names, ids, signals and the input/result types — and nothing
 * of the workflow code itself, so services and activities never import `workflows/` (which would
 * close an import circle through the activity factory that the workflows type-import).
 *
 * The names come from the public Temporal contract (`src/client/temporal-contract.ts`), the one
 * list of them; they are the exported function names in the bundle (`workflows/index.ts`), which a
 * unit test holds equal, and the recorded histories hold them unchanged.
 */
import { defineSignal } from '@temporalio/workflow';
import { SignalName, WorkflowType } from '../client/temporal-contract';
import type { AppliedDecision } from '../core/dto';

export interface ConversationInput {
  userId: string;
  conversationId: string;
  /** Keyed reference to the conversation id, used in workflow ids and search attributes. */
  conversationRef?: string;
  idleSeconds: number;
}

export interface MessagesAddedInput {
  count: number;
}

export interface ExtractMemoriesInput {
  userId: string;
  conversationId: string;
}

export interface ExtractionResult {
  userId: string;
  conversationId: string;
  messagesProcessed: number;
  decisions: AppliedDecision[];
  counts: Record<AppliedDecision['action'], number>;
  /** The conversation's extraction watermark after the run (runs with watermarks only). */
  watermark?: number;
  /** Passes over the conversation: more than one when messages arrived while the run went on. */
  passes?: number;
}

export interface ConversationOutcome {
  /** `already-extracting`: only runs from before follow-up runs (they dropped what came after). */
  outcome: 'ended-by-call' | 'idle-extracted' | 'already-extracting';
  /** The last extraction this workflow ran. */
  extraction?: ExtractionResult;
  /** Extractions this workflow ran: more than one when messages arrived while one was running. */
  extractions?: number;
}

/** Workflow type names, as the worker registers them. */
export const ConversationWorkflows = {
  conversation: WorkflowType.conversation,
  extractMemories: WorkflowType.extractMemories,
} as const;

/** The workflows' signatures, for typed starts by name (`client.workflow.start<ExtractMemoriesWorkflow>(name, …)`). */
export type ConversationWorkflow = (input: ConversationInput) => Promise<ConversationOutcome>;
export type ExtractMemoriesWorkflow = (input: ExtractMemoriesInput) => Promise<ExtractionResult>;

export const messagesAddedSignal = defineSignal<[MessagesAddedInput]>(SignalName.messagesAdded);
export const conversationEndedSignal = defineSignal<[]>(SignalName.conversationEnded);

/**
 * `conversationRef` is a keyed reference to the client's conversation id (which may carry personal
 * words); the user key is already a pseudonym. No part contains ":", so no two (tenant, user,
 * conversation) triples share an id.
 */
export function extractWorkflowId(userKey: string, conversationRef: string): string {
  return `extract:${userKey}:${conversationRef}`;
}

export function conversationWorkflowId(userKey: string, conversationRef: string): string {
  return `conversation:${userKey}:${conversationRef}`;
}
