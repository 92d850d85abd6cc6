/**
 * The Temporal surface of jarvis-memory, as a contract for callers that run their own Temporal
 * workers and clients on the memory service's namespace (a chat service, an agent runtime):
 * names, input and output types, workflow-id helpers and the contract version. Types and
 * constants only — importing this module pulls in no server code and no Temporal package, so
 * workflow code may import it too. docs/integrate-temporal.md explains every item.
 *
 *   - activity `recall` on the memory task queue: the result of `POST /v1/users/{userId}/recall`;
 *   - workflow `ExtractMemories` (start it, or run it as a child): stores the messages it is given
 *     and extracts memories from the conversation, returning every decision and the reminders the
 *     conversation asked for;
 *   - reminder workflows `reminder:<userKey>:<reminderId>` take the signals `snoozeSignal` and
 *     `dismissSignal`.
 *
 * Payload encryption: what crosses to a caller — the `recall` activity's input, result and
 * failure, and `ExtractMemories`' input, result and failure — stays readable with Temporal's
 * default data converter; a caller configures no codec. Everything the memory service keeps for
 * itself stays encrypted with the user's data key.
 *
 * Trust: Temporal has no per-tenant authorisation on a namespace. A worker or client on the memory
 * namespace can act for any user of any configured tenant; it is an operator-level integration,
 * not a tenant. Tenants that must not reach each other's users use the HTTP API with their own key.
 */

import type { ChatMessage, Decision, RecallRequest, RecallResponse } from './index';

/**
 * Version of this contract. Additive changes (a new optional field, a new activity) keep it;
 * anything a caller built against the old version would trip over bumps it. Inputs may carry
 * `contractVersion`: the memory service refuses (non-retryably) a version newer than its own.
 */
export const MEMORY_CONTRACT_VERSION = 1;

/** Defaults of `TEMPORAL_NAMESPACE` and `TEMPORAL_TASK_QUEUE`; a deployment may set others. */
export const MEMORY_NAMESPACE = 'jarvis-memory';
export const MEMORY_TASK_QUEUE = 'jarvis-memory';

/** Activity type: recall for one chat message. */
export const RECALL_ACTIVITY = 'recall';

/** Workflow type callers start: store messages (optional) and extract memories. */
export const EXTRACT_MEMORIES_WORKFLOW = 'ExtractMemories';
/**
 * The memory service's own extraction (conversation idle timer, `POST …/end`), run by
 * `ExtractMemories` as its child; kept under its first name so running histories replay.
 */
export const EXTRACT_MEMORIES_INTERNAL_WORKFLOW = 'extractMemoriesWorkflow';

/** Workflow type of a reminder; one execution per reminder (recurring ones continue as new). */
export const REMINDER_WORKFLOW = 'reminderWorkflow';
/** Signals a reminder workflow takes: "稍后" (fire again in `seconds`) and "知道了" (this occurrence is done). */
export const REMINDER_SIGNALS = { snooze: 'snoozeSignal', dismiss: 'dismissSignal' } as const;
/** Update (validated: a future time within 10 years) and query of a reminder workflow. */
export const REMINDER_UPDATES = { reschedule: 'rescheduleUpdate' } as const;
export const REMINDER_QUERIES = { state: 'stateQuery' } as const;

/** Workflow types of the API's decisions (docs/audit.md). */
export const STORE_MEMORY_WORKFLOW = 'storeMemoryWorkflow';
export const MEMORY_DECISION_WORKFLOW = 'MemoryDecision';
export const PURGE_USER_WORKFLOW = 'PurgeUser';

/** Custom search attributes (ids and enums only; never encrypted). */
export const MEMORY_SEARCH_ATTRIBUTES = {
  /** The user key `<tenant>:<26 base32 chars>` (a keyed pseudonym of the tenant's user id). */
  userKey: 'MemoryUserId',
  tenant: 'MemoryTenant',
  /** Keyed reference of a conversation id (never the id itself). */
  conversation: 'ConversationId',
  /** Decisions a workflow took: create, reinforce, update, supersede, forget, ignore, restore, erase, purge. */
  decisions: 'MemoryDecisions',
  reminderStatus: 'ReminderStatus',
} as const;

/**
 * `ApplicationFailure.type` of a refusal (non-retryable; the same codes as the HTTP API's
 * `error.code`). Anything else is transient and retried under the caller's retry policy.
 */
export const MEMORY_FAILURE_TYPES = {
  validationFailed: 'validation_failed',
  notFound: 'not_found',
  /** The tenant is not one of the memory service's configured tenants, or the contract version is newer. */
  forbidden: 'forbidden',
  invalidState: 'invalid_state',
} as const;

/** Whose memory: the tenant and the tenant's own id for the person (as in the HTTP API's path). */
export interface MemoryCaller {
  tenantId: string;
  userId: string;
  /** The contract version the caller was built against; default: this one. */
  contractVersion?: number;
}

/** Input of the `recall` activity: the caller plus the body of `POST …/recall`. */
export type RecallActivityInput = MemoryCaller & RecallRequest;
/** Result of the `recall` activity: exactly the body `POST …/recall` answers (degraded routes in `error`). */
export type RecallActivityResult = RecallResponse;

/** For `proxyActivities<MemoryActivities>({ taskQueue: MEMORY_TASK_QUEUE, … })`. */
export interface MemoryActivities {
  recall(input: RecallActivityInput): Promise<RecallActivityResult>;
}

export interface ExtractMemoriesInput extends MemoryCaller {
  /** The caller's conversation id (stored as given; Temporal sees only a keyed reference of it). */
  conversationId: string;
  /**
   * Messages to store before extracting (idempotent per message id, like
   * `POST …/conversations/{id}/messages`). Absent: the conversation's stored messages are extracted.
   */
  messages?: ChatMessage[];
}

/** A reminder the conversation asked for ("明天早上9点提醒我…"), started by the extraction. */
export interface ExtractedReminder {
  reminderId: string;
  /** Signal `REMINDER_SIGNALS.snooze` / `.dismiss` here. */
  workflowId: string;
  messageId: string;
  text: string;
  dueAt: string;
  timeZone: string;
}

export interface ExtractMemoriesResult {
  contractVersion: number;
  /** The user key (`MemoryUserId` in Temporal UI); `reminderWorkflowId(userKey, …)` takes it. */
  userKey: string;
  conversationId: string;
  /** What storing `messages` did (both empty without messages). */
  messages: { inserted: string[]; duplicates: string[] };
  /** Id of the extraction run (the internal workflow, with one activity per candidate). */
  extractionWorkflowId: string;
  messagesProcessed: number;
  counts: Record<Decision['action'], number>;
  decisions: Decision[];
  reminders: ExtractedReminder[];
}

/** For `executeChild<ExtractMemoriesWorkflow>(EXTRACT_MEMORIES_WORKFLOW, …)` and `client.workflow.start<…>`. */
export type ExtractMemoriesWorkflow = (input: ExtractMemoriesInput) => Promise<ExtractMemoriesResult>;

export interface ReminderSnoozeInput {
  /** Seconds from now; clamped to 1 s – 30 days. */
  seconds: number;
}

/** Workflow id of a reminder; the API returns it too (`workflowId` of every reminder view). */
export function reminderWorkflowId(userKey: string, reminderId: string): string {
  return `reminder:${userKey}:${reminderId}`;
}

/**
 * A workflow id for an `ExtractMemories` run. `callerRef` is the caller's own reference for the
 * run (a conversation UUID and turn): workflow ids are not encrypted, so it must not carry
 * personal words. Any id works; one per conversation turn keeps retries of a start idempotent.
 */
export function extractMemoriesWorkflowId(tenantId: string, callerRef: string): string {
  return `${EXTRACT_MEMORIES_WORKFLOW}:${tenantId}:${callerRef}`;
}

/** Visibility query of everything the memory service ran for one user (Temporal UI, `temporal workflow list -q`). */
export function userWorkflowsQuery(userKey: string): string {
  return `${MEMORY_SEARCH_ATTRIBUTES.userKey} = '${userKey.replace(/'/g, '')}'`;
}
