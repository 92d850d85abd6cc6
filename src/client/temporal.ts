/**
 * The Temporal side of jarvis-memory as a client sees it: the workflow types, the signals, the
 * workflow ids and the search attributes of a user's executions. For auditors and operators who
 * read Temporal directly (Temporal UI, `temporal workflow list`, a Temporal client of their own)
 * next to the HTTP API. Nothing here talks to Temporal, and nothing needs the Temporal SDK.
 *
 * Every per-user id carries the *user key* — the keyed pseudonym `GET /v1/users/{userId}` returns
 * (`MemoryClient.getUser`) — never the tenant's own user id; the conversation part of an id is a
 * keyed reference only the server can compute, which is why the API returns `workflowId`s.
 * `test/client-temporal.test.ts` keeps these names equal to the workflows' own.
 */

/** Workflow types registered by the worker. */
export const WorkflowType = {
  storeMemory: 'storeMemoryWorkflow',
  conversation: 'conversationWorkflow',
  extractMemories: 'extractMemoriesWorkflow',
  recallReinforcement: 'recallReinforcementWorkflow',
  reminder: 'reminderWorkflow',
  digest: 'digestWorkflow',
  nudge: 'nudgeWorkflow',
  memorySweep: 'memorySweepWorkflow',
  weeklyReinforcement: 'weeklyReinforcementWorkflow',
  purgeUser: 'PurgeUser',
  /** A caller's extraction with the messages in its input (see temporal-contract.ts). */
  callerExtraction: 'ExtractMemories',
  /** Forget, restore or erase through the API, as a short audited workflow. */
  memoryDecision: 'MemoryDecision',
  /** Scheduled (docs/reliability.md): extracts idle conversations with messages after their watermark. */
  extractionReconciler: 'extractionReconcilerWorkflow',
  /** Scheduled (docs/reliability.md): drains the vector outbox with backoff and dead letters. */
  vectorOutbox: 'vectorOutboxWorkflow',
  /** Scheduled (docs/recall.md): embeds new exchanges for dense conversation search. */
  exchangeIndex: 'exchangeIndexWorkflow',
} as const;
export type WorkflowType = (typeof WorkflowType)[keyof typeof WorkflowType];

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
} as const;
export const UpdateName = { reschedule: 'rescheduleUpdate' } as const;
export const QueryName = { reminderState: 'stateQuery' } as const;

/** Custom search attributes: ids and enums only (search attributes are not encrypted). */
export const SearchAttribute = {
  /** The user key of every per-user execution. */
  userKey: 'MemoryUserId',
  tenant: 'MemoryTenant',
  /** The keyed conversation reference of conversation and extraction workflows. */
  conversation: 'ConversationId',
  /** The decisions an extraction took (create, update, supersede…). */
  decisions: 'MemoryDecisions',
  /** A reminder's status (scheduled, snoozed, fired, dismissed, cancelled). */
  reminderStatus: 'ReminderStatus',
} as const;

export interface MessagesAddedInput {
  count: number;
}
export interface SnoozeInput {
  seconds: number;
}
export interface RescheduleInput {
  /** ISO 8601 with offset. */
  dueAt: string;
}

/** The kinds of per-user workflow id, by their prefix. */
export type WorkflowIdKind = 'store' | 'conversation' | 'extract' | 'reminder' | 'reinforce' | 'purge';

const USER_KEY = /^[A-Za-z0-9][A-Za-z0-9._@-]*:[A-Za-z0-9._@-]+$/;

function assertUserKey(userKey: string): string {
  // Keys are ids, never free text: that is what makes them safe to quote in a visibility query.
  if (!USER_KEY.test(userKey) || userKey.length > 200) throw new TypeError(`not a user key: ${JSON.stringify(userKey.slice(0, 40))}`);
  return userKey;
}

/** Workflow id of one reminder (`reminder:<userKey>:<reminderId>`); the id a ReminderView carries. */
export function reminderWorkflowId(userKey: string, reminderId: string): string {
  return `reminder:${assertUserKey(userKey)}:${reminderId}`;
}

/** Workflow id of a user's recall reinforcement (one per user). */
export function reinforcementWorkflowId(userKey: string): string {
  return `reinforce:${assertUserKey(userKey)}`;
}

/**
 * Reads a workflow id this service made: its kind, and the user key it belongs to (absent for a
 * purge, whose id names no user). Undefined for an id of another shape.
 */
export function parseWorkflowId(workflowId: string): { kind: WorkflowIdKind; userKey?: string; ref?: string } | undefined {
  const parts = workflowId.split(':');
  const kind = parts[0] as WorkflowIdKind;
  if (kind === 'purge') return parts.length === 3 ? { kind, ref: parts[2] } : undefined;
  if (!['store', 'conversation', 'extract', 'reminder', 'reinforce'].includes(kind)) return undefined;
  // <kind>:<tenant>:<key>[:<ref>]; the user key itself is "<tenant>:<key>".
  const expected = kind === 'reinforce' ? 3 : 4;
  if (parts.length !== expected) return undefined;
  const userKey = `${parts[1]}:${parts[2]}`;
  if (!USER_KEY.test(userKey)) return undefined;
  return kind === 'reinforce' ? { kind, userKey } : { kind, userKey, ref: parts[3] };
}

/** Visibility query for every execution of one user (what `UserInfo.temporalQuery` holds). */
export function userWorkflowsQuery(userKey: string, opts: { type?: WorkflowType; status?: 'Running' | 'Completed' | 'Failed' | 'Terminated' | 'Canceled' } = {}): string {
  const clauses = [`${SearchAttribute.userKey} = '${assertUserKey(userKey)}'`];
  if (opts.type) clauses.push(`WorkflowType = '${opts.type}'`);
  if (opts.status) clauses.push(`ExecutionStatus = '${opts.status}'`);
  return clauses.join(' AND ');
}

/** Visibility query for every per-user execution of one tenant. */
export function tenantWorkflowsQuery(tenantId: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._@-]*$/.test(tenantId)) throw new TypeError('not a tenant id');
  return `${SearchAttribute.tenant} = '${tenantId}'`;
}
