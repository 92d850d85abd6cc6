/**
 * The Temporal surface of jarvis-memory, as a contract for callers that run their own Temporal
 * workers and clients on the memory service's namespace (a chat service, an agent runtime) and
 * for auditors and operators who read Temporal directly (Temporal UI, `temporal workflow list`):
 * names, input and output types, workflow ids, search attributes and the contract version. Types
 * and constants only — importing this module pulls in no server code and no Temporal package, so
 * workflow code may import it too. It is `@jarvis-memory/client/temporal` in the client package;
 * docs/integrate-temporal.md explains every item, and test/client-temporal.test.ts and
 * test/temporal-contract.test.ts keep the names equal to the workflows' own.
 *
 *   - activity `recall` on the memory task queue: the result of `POST /v1/users/{userId}/recall`;
 *   - workflow `ExtractMemories` (start it, or run it as a child): stores the messages it is given
 *     and extracts memories from the conversation, returning every decision and the reminders the
 *     conversation asked for;
 *   - reminder workflows `reminder:<userKey>:<reminderId>` take the signals `snoozeSignal` and
 *     `dismissSignal`.
 *
 * Every per-user id carries the *user key* — the keyed pseudonym `GET /v1/users/{userId}` returns
 * (`MemoryClient.getUser`) — never the tenant's own user id; the conversation part of an id is a
 * keyed reference only the server can compute, which is why the API returns `workflowId`s.
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

import type { ChatMessage, Decision, RecallRequest, RecallResponse } from './index.js';

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

/** Workflow types registered by the worker. */
export const WorkflowType = {
  storeMemory: 'storeMemoryWorkflow',
  conversation: 'conversationWorkflow',
  extractMemories: 'extractMemoriesWorkflow',
  recallReinforcement: 'recallReinforcementWorkflow',
  reminder: 'reminderWorkflow',
  digest: 'digestWorkflow',
  nudge: 'nudgeWorkflow',
  /** One per user, fed by recalls: an open goal or pain point that was recalled may get a nudge (docs/proactive.md). */
  recallNudge: 'recallNudgeWorkflow',
  memorySweep: 'memorySweepWorkflow',
  weeklyReinforcement: 'weeklyReinforcementWorkflow',
  purgeUser: 'PurgeUser',
  /** A caller's extraction with the messages in its input ({@link EXTRACT_MEMORIES_WORKFLOW}). */
  callerExtraction: 'ExtractMemories',
  /** Forget, restore or erase through the API, as a short audited workflow. */
  memoryDecision: 'MemoryDecision',
  /** Scheduled (docs/reliability.md): extracts idle conversations with messages after their watermark. */
  extractionReconciler: 'extractionReconcilerWorkflow',
  /** Scheduled (docs/reliability.md): starts the workflow of open reminders whose row lost it. */
  reminderReconciler: 'reminderReconcilerWorkflow',
  /** Scheduled (docs/reliability.md): drains the vector outbox with backoff and dead letters. */
  vectorOutbox: 'vectorOutboxWorkflow',
  /** The user's persona (recall's profile at the top of the system part), rebuilt after memory changes. */
  persona: 'RebuildPersona',
  /** Scheduled (docs/recall.md): embeds new exchanges for dense conversation search. */
  exchangeIndex: 'exchangeIndexWorkflow',
} as const;
export type WorkflowType = (typeof WorkflowType)[keyof typeof WorkflowType];

/** Workflow type callers start: store messages (optional) and extract memories. */
export const EXTRACT_MEMORIES_WORKFLOW = WorkflowType.callerExtraction;
/**
 * The memory service's own extraction (conversation idle timer, `POST …/end`), run by
 * `ExtractMemories` as its child; kept under its first name so running histories replay.
 */
export const EXTRACT_MEMORIES_INTERNAL_WORKFLOW = WorkflowType.extractMemories;
/** Workflow type of a reminder; one execution per reminder (recurring ones continue as new). */
export const REMINDER_WORKFLOW = WorkflowType.reminder;
/** Workflow types of the API's decisions (docs/audit.md). */
export const STORE_MEMORY_WORKFLOW = WorkflowType.storeMemory;
export const MEMORY_DECISION_WORKFLOW = WorkflowType.memoryDecision;
export const PURGE_USER_WORKFLOW = WorkflowType.purgeUser;

/** Signal, update and query names, with the payload each one takes. */
export const SignalName = {
  /** ConversationWorkflow: new messages arrived; the idle timer starts over. Payload {@link MessagesAddedInput}. */
  messagesAdded: 'messagesAddedSignal',
  /** ConversationWorkflow: the conversation was ended by call (no payload). */
  conversationEnded: 'conversationEndedSignal',
  /** ReminderWorkflow: "稍后", fire again in `seconds`. Payload {@link SnoozeInput}. */
  snooze: 'snoozeSignal',
  /** ReminderWorkflow: "知道了", this occurrence is done (payload `{}`). */
  dismiss: 'dismissSignal',
  /** RebuildPersona: the user's memories changed (no payload); sent with signal-with-start. */
  memoriesChanged: 'memoriesChanged',
} as const;
export const UpdateName = { reschedule: 'rescheduleUpdate' } as const;
export const QueryName = { reminderState: 'stateQuery' } as const;

/** Signals a reminder workflow takes: "稍后" (fire again in `seconds`) and "知道了" (this occurrence is done). */
export const REMINDER_SIGNALS = { snooze: SignalName.snooze, dismiss: SignalName.dismiss } as const;
/** Update (validated: a future time within 10 years) and query of a reminder workflow. */
export const REMINDER_UPDATES = { reschedule: UpdateName.reschedule } as const;
export const REMINDER_QUERIES = { state: QueryName.reminderState } as const;

/** Custom search attributes (ids and enums only; never encrypted). */
export const SearchAttribute = {
  /** The user key `<tenant>:<26 base32 chars>` of every per-user execution (a keyed pseudonym of the tenant's user id). */
  userKey: 'MemoryUserId',
  tenant: 'MemoryTenant',
  /** Keyed reference of a conversation id (never the id itself), on conversation and extraction workflows. */
  conversation: 'ConversationId',
  /** Decisions a workflow took: create, reinforce, update, supersede, forget, ignore, restore, erase, purge. */
  decisions: 'MemoryDecisions',
  /** A reminder's status (scheduled, snoozed, fired, dismissed, cancelled). */
  reminderStatus: 'ReminderStatus',
} as const;
export const MEMORY_SEARCH_ATTRIBUTES = SearchAttribute;

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

export interface MessagesAddedInput {
  count: number;
}
/** Payload of {@link SignalName.snooze}. */
export interface SnoozeInput {
  /** Seconds from now; clamped to 1 s – 30 days. */
  seconds: number;
}
export type ReminderSnoozeInput = SnoozeInput;
export interface RescheduleInput {
  /** ISO 8601 with offset. */
  dueAt: string;
}

/**
 * A workflow id for an `ExtractMemories` run. `callerRef` is the caller's own reference for the
 * run (a conversation UUID and turn): workflow ids are not encrypted, so it must not carry
 * personal words. Any id works; one per conversation turn keeps retries of a start idempotent.
 */
export function extractMemoriesWorkflowId(tenantId: string, callerRef: string): string {
  return `${EXTRACT_MEMORIES_WORKFLOW}:${tenantId}:${callerRef}`;
}

/** The kinds of per-user workflow id, by their prefix. */
export type WorkflowIdKind = 'store' | 'conversation' | 'extract' | 'reminder' | 'reinforce' | 'persona' | 'purge';

const USER_KEY = /^[A-Z0-9][\w.@-]*:[\w.@-]+$/i;

function assertUserKey(userKey: string): string {
  // Keys are ids, never free text: that is what makes them safe to quote in a visibility query.
  if (!USER_KEY.test(userKey) || userKey.length > 200) throw new TypeError(`not a user key: ${JSON.stringify(userKey.slice(0, 40))}`);
  return userKey;
}

/** Workflow id of one reminder (`reminder:<userKey>:<reminderId>`); the id a ReminderView carries, and where `REMINDER_SIGNALS` go. */
export function reminderWorkflowId(userKey: string, reminderId: string): string {
  return `reminder:${assertUserKey(userKey)}:${reminderId}`;
}

/** Workflow id of a user's recall reinforcement (one per user). */
export function reinforcementWorkflowId(userKey: string): string {
  return `reinforce:${assertUserKey(userKey)}`;
}

/** Workflow id of a user's persona rebuilds (one per user). */
export function personaWorkflowId(userKey: string): string {
  return `persona:${assertUserKey(userKey)}`;
}

/**
 * Reads a workflow id this service made: its kind, and the user key it belongs to (absent for a
 * purge, whose id names no user). Undefined for an id of another shape.
 */
export function parseWorkflowId(workflowId: string): { kind: WorkflowIdKind; userKey?: string; ref?: string } | undefined {
  const parts = workflowId.split(':');
  const kind = parts[0] as WorkflowIdKind;
  if (kind === 'purge') return parts.length === 3 ? { kind, ref: parts[2] } : undefined;
  if (!['store', 'conversation', 'extract', 'reminder', 'reinforce', 'persona'].includes(kind)) return undefined;
  // <kind>:<tenant>:<key>[:<ref>]; the user key itself is "<tenant>:<key>".
  const perUser = kind === 'reinforce' || kind === 'persona';
  const expected = perUser ? 3 : 4;
  if (parts.length !== expected) return undefined;
  const userKey = `${parts[1]}:${parts[2]}`;
  if (!USER_KEY.test(userKey)) return undefined;
  return perUser ? { kind, userKey } : { kind, userKey, ref: parts[3] };
}

/** Visibility query for every execution of one user (what `UserInfo.temporalQuery` holds; Temporal UI, `temporal workflow list -q`). */
export function userWorkflowsQuery(userKey: string, opts: { type?: WorkflowType; status?: 'Running' | 'Completed' | 'Failed' | 'Terminated' | 'Canceled' } = {}): string {
  const clauses = [`${SearchAttribute.userKey} = '${assertUserKey(userKey)}'`];
  if (opts.type) clauses.push(`WorkflowType = '${opts.type}'`);
  if (opts.status) clauses.push(`ExecutionStatus = '${opts.status}'`);
  return clauses.join(' AND ');
}

/** Visibility query for every per-user execution of one tenant. */
export function tenantWorkflowsQuery(tenantId: string): string {
  if (!/^[A-Z0-9][\w.@-]*$/i.test(tenantId)) throw new TypeError('not a tenant id');
  return `${SearchAttribute.tenant} = '${tenantId}'`;
}
