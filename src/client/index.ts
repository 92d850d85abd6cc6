/**
 * Typed client for the jarvis-memory HTTP API (`@jarvis-memory/client`). Errors arrive as
 * `MemoryApiError` with the server's machine-readable code; nothing here throws for a recall that
 * degraded (check `error`). No dependencies: it needs a global `fetch` (Node 18+, browsers).
 * The LangChain retriever is `@jarvis-memory/client/langchain`; the Temporal names and ids are
 * `@jarvis-memory/client/temporal`.
 */
import type { MemoryType } from './generated-memory-types.js';
import type { CreateReminderRequest, DigestView, NotificationView, ProactiveSettings, ReminderActionAccepted, ReminderStatus, ReminderView, UserSettingsView } from './proactive-types.js';
import type { ChatMessage, ConversationSearchRequest, ConversationSearchResponse, Decision, MemoryEventView, MemoryStatus, MemoryView, MintedUserKey, PageSignIn, PurgeResult, RecallRequest, RecallResponse, SceneView, UserExportDocument, UserInfo, UserKeyView, WorkflowPending } from './views.js';

export type * from './proactive-types.js';
export type * from './views.js';
export type { MemoryType } from './generated-memory-types.js';

/** Whether an answer is a 202 `pending` (the workflow goes on) rather than the finished result. */
export function isWorkflowPending(answer: object): answer is WorkflowPending {
  return 'pending' in answer && answer.pending === true && 'workflowId' in answer;
}

export class MemoryApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'MemoryApiError';
  }
}

export interface MemoryClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Per-request timeout; recall has its own server-side deadline too. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export class MemoryClient {
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: MemoryClientOptions) {
    this.fetchImpl = options.fetch ?? fetch;
  }

  private async send(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<Response> {
    const res = await this.fetchImpl(`${this.options.baseUrl.replace(/\/$/, '')}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.options.apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs ?? this.options.timeoutMs ?? 30_000),
    });
    if (!res.ok) {
      const text = await res.text();
      let err: { code?: string; message?: string; details?: unknown } | undefined;
      try {
        err = (JSON.parse(text) as { error?: typeof err }).error;
      } catch {
        // Not the service's JSON (a proxy in between): the status says enough.
        err = undefined;
      }
      throw new MemoryApiError(res.status, err?.code ?? 'http_error', err?.message ?? `HTTP ${res.status}`, err?.details);
    }
    return res;
  }

  private async request<T>(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<T> {
    const text = await (await this.send(method, path, body, timeoutMs)).text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * A `?wait=true` call is answered when its workflow ends or after the server's own wait
   * (WORKFLOW_WAIT_TIMEOUT_MS, 120 s by default, then 202 `pending`): give up only after that.
   */
  private waitTimeoutMs(): number {
    return Math.max(this.options.timeoutMs ?? 0, 150_000);
  }

  private user(userId: string): string {
    return `/v1/users/${encodeURIComponent(userId)}`;
  }

  /** The tenant this key belongs to and the user key (`MemoryUserId` in Temporal) of `userId`. */
  getUser(userId: string): Promise<UserInfo> {
    return this.request('GET', this.user(userId));
  }

  /** A one-time sign-in link to this user's memory page (`PageSignIn.url`, relative to the service). */
  createPageToken(userId: string): Promise<PageSignIn> {
    return this.request('POST', `${this.user(userId)}/page-token`);
  }

  /**
   * Mints a key that reaches this user only — the credential for an MCP client or a chat app on the
   * user's device. Tenant key only; the secret is in this answer and nowhere else.
   */
  createUserKey(userId: string, input: { label?: string; expiresAt?: string } = {}): Promise<MintedUserKey> {
    return this.request('POST', `${this.user(userId)}/keys`, input);
  }

  /** The user's keys (tenant key only), without secrets. */
  async listUserKeys(userId: string): Promise<UserKeyView[]> {
    return (await this.request<{ keys: UserKeyView[] }>('GET', `${this.user(userId)}/keys`)).keys;
  }

  /** Revokes a key at once (tenant key only); `not_found` when this user has no such key, revoked or never theirs. */
  async revokeUserKey(userId: string, keyId: string): Promise<void> {
    await this.request('DELETE', `${this.user(userId)}/keys/${encodeURIComponent(keyId)}`);
  }

  /** Everything stored about the user as one document (right of access). Large users: {@link exportUserStream}. */
  exportUser(userId: string): Promise<UserExportDocument> {
    return this.request('GET', `${this.user(userId)}/export`);
  }

  /** The export as the server streams it (JSON bytes), to write to a file without holding it in memory. */
  async exportUserStream(userId: string): Promise<ReadableStream<Uint8Array>> {
    const res = await this.send('GET', `${this.user(userId)}/export`);
    if (!res.body) throw new MemoryApiError(res.status, 'http_error', 'the export came without a body');
    return res.body;
  }

  /**
   * Erases everything stored about the user (the PurgeUser workflow). With `wait`, resolves with
   * the counts once it finished, or with just the ids when it takes longer than the server waits.
   */
  purgeUser(userId: string, opts: { wait?: boolean } = {}): Promise<{ workflowId: string; runId: string; result?: PurgeResult }> {
    return this.request('DELETE', `${this.user(userId)}${opts.wait ? '?wait=true' : ''}`, undefined, opts.wait ? this.waitTimeoutMs() : undefined);
  }

  health(): Promise<{ status: string; checks: Record<string, { status: string; latencyMs: number; error?: string }> }> {
    return this.request('GET', '/healthz');
  }

  createMemory(
    userId: string,
    input: { text: string; type?: MemoryType; scope?: 'global' | 'task'; confidence?: number; importance?: number; keywords?: string[]; metadata?: Record<string, unknown>; expiresAt?: string; at?: string; requestId?: string; via?: 'api' | 'mcp' },
  ): Promise<{ memory: MemoryView; decision: { action: string; reason: string }; workflowId: string } | WorkflowPending> {
    return this.request('POST', `${this.user(userId)}/memories`, input, this.waitTimeoutMs());
  }

  listMemories(userId: string, query: { status?: MemoryStatus; type?: MemoryType; limit?: number; offset?: number } = {}): Promise<{ memories: MemoryView[]; total: number; limit: number; offset: number }> {
    const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
    return this.request('GET', `${this.user(userId)}/memories${qs.size > 0 ? `?${qs}` : ''}`);
  }

  getMemory(userId: string, id: string): Promise<{ memory: MemoryView }> {
    return this.request('GET', `${this.user(userId)}/memories/${encodeURIComponent(id)}`);
  }

  history(userId: string, id: string): Promise<{ memoryId: string; events: MemoryEventView[] }> {
    return this.request('GET', `${this.user(userId)}/memories/${encodeURIComponent(id)}/history`);
  }

  /** The user's scenes (life areas) with their memory counts, largest first. */
  listScenes(userId: string): Promise<{ scenes: SceneView[]; language?: 'zh' | 'en'; builtAt?: string }> {
    return this.request('GET', `${this.user(userId)}/scenes`);
  }

  /** One scene's active memories, most important first; 404 `not_found` for an id that is not one of the user's scenes. */
  sceneMemories(userId: string, sceneId: string, query: { limit?: number } = {}): Promise<{ scene: SceneView; memories: MemoryView[]; total: number }> {
    return this.request('GET', `${this.user(userId)}/scenes/${encodeURIComponent(sceneId)}/memories${query.limit ? `?limit=${query.limit}` : ''}`);
  }

  /** Forgets a memory (status expired, vector removed). Repeating it returns `changed: false`. */
  forgetMemory(userId: string, id: string): Promise<{ memory: MemoryView; changed: boolean; vectorRemoved: boolean } | WorkflowPending> {
    return this.request('DELETE', `${this.user(userId)}/memories/${encodeURIComponent(id)}`, undefined, this.waitTimeoutMs());
  }

  /** Confirms a pending memory (an instruction an agent or app wrote): injected as the user's own from the next recall on. Repeating it returns `changed: false`. */
  confirmMemory(userId: string, id: string): Promise<{ memory: MemoryView; changed: boolean; workflowId: string } | WorkflowPending> {
    return this.request('POST', `${this.user(userId)}/memories/${encodeURIComponent(id)}/confirm`, {}, this.waitTimeoutMs());
  }

  /** Restores an archived memory; 409 `invalid_state` for any other status. */
  restoreMemory(userId: string, id: string): Promise<{ memory: MemoryView; vectorSynced: boolean } | WorkflowPending> {
    return this.request('POST', `${this.user(userId)}/memories/${encodeURIComponent(id)}/restore`, {}, this.waitTimeoutMs());
  }

  recall(userId: string, input: RecallRequest): Promise<RecallResponse> {
    return this.request('POST', `${this.user(userId)}/recall`, input);
  }

  /** L0 conversation search: exchanges with their dates, by keywords, dates and episodes. */
  searchConversations(userId: string, input: ConversationSearchRequest): Promise<ConversationSearchResponse> {
    return this.request('POST', `${this.user(userId)}/conversations/search`, input);
  }

  addMessages(userId: string, conversationId: string, messages: ChatMessage[]): Promise<{ accepted: string[]; duplicates: string[]; workflowId: string }> {
    return this.request('POST', `${this.user(userId)}/conversations/${encodeURIComponent(conversationId)}/messages`, { messages });
  }

  endConversation(userId: string, conversationId: string, opts: { wait: true }): Promise<{ workflowId: string; runId: string; result: { messagesProcessed: number; counts: Record<string, number>; decisions: Decision[] } }>;
  endConversation(userId: string, conversationId: string, opts?: { wait?: false }): Promise<{ workflowId: string; runId: string }>;
  endConversation(userId: string, conversationId: string, opts: { wait?: boolean } = {}): Promise<unknown> {
    return this.request('POST', `${this.user(userId)}/conversations/${encodeURIComponent(conversationId)}/end${opts.wait ? '?wait=true' : ''}`, {}, opts.wait ? this.waitTimeoutMs() : undefined);
  }

  // --- Proactive memory (the service speaks first): reminders, notifications, settings, digests ---

  /**
   * Starts a ReminderWorkflow; 400 for a past dueAt (without rrule), an unknown timezone or a bad
   * rrule; 422 `request_id_reused` for a `requestId` sent before with another body. `pending: true`
   * (HTTP 202) when Temporal took the start without answering in time: the reminder is stored and
   * its workflow starts once Temporal answers.
   */
  createReminder(userId: string, input: CreateReminderRequest): Promise<ReminderView> {
    return this.request('POST', `${this.user(userId)}/reminders`, input);
  }

  listReminders(userId: string, query: { status?: ReminderStatus; limit?: number } = {}): Promise<{ reminders: ReminderView[] }> {
    const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
    return this.request('GET', `${this.user(userId)}/reminders${qs.size > 0 ? `?${qs}` : ''}`);
  }

  getReminder(userId: string, id: string): Promise<ReminderView> {
    return this.request('GET', `${this.user(userId)}/reminders/${encodeURIComponent(id)}`);
  }

  /** "稍后": fire again in `seconds` (60 s – 30 days). */
  snoozeReminder(userId: string, id: string, seconds: number): Promise<ReminderActionAccepted> {
    return this.request('POST', `${this.user(userId)}/reminders/${encodeURIComponent(id)}/snooze`, { seconds });
  }

  /** "知道了": this occurrence is done. */
  dismissReminder(userId: string, id: string): Promise<ReminderActionAccepted> {
    return this.request('POST', `${this.user(userId)}/reminders/${encodeURIComponent(id)}/dismiss`, {});
  }

  rescheduleReminder(userId: string, id: string, dueAt: string): Promise<{ id: string; status: string; dueAt: string; occurrence: number; version: number } | ReminderActionAccepted> {
    return this.request('PATCH', `${this.user(userId)}/reminders/${encodeURIComponent(id)}`, { dueAt });
  }

  cancelReminder(userId: string, id: string): Promise<ReminderActionAccepted> {
    return this.request('DELETE', `${this.user(userId)}/reminders/${encodeURIComponent(id)}`);
  }

  listNotifications(userId: string, query: { kind?: NotificationView['kind']; unread?: boolean; limit?: number } = {}): Promise<{ notifications: NotificationView[] }> {
    const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
    return this.request('GET', `${this.user(userId)}/notifications${qs.size > 0 ? `?${qs}` : ''}`);
  }

  getSettings(userId: string): Promise<UserSettingsView> {
    return this.request('GET', `${this.user(userId)}/settings`);
  }

  /** Partial update; the digest and nudge schedules follow. */
  updateSettings(userId: string, input: { timezone?: string; digestTime?: string; proactive?: Partial<ProactiveSettings> }): Promise<UserSettingsView> {
    return this.request('PUT', `${this.user(userId)}/settings`, input);
  }

  listDigests(userId: string, days = 7): Promise<{ digests: DigestView[] }> {
    return this.request('GET', `${this.user(userId)}/digests?days=${days}`);
  }

  /** Writes today's digest now (not pushed as a notification); `pending` when it outlasts WORKFLOW_WAIT_TIMEOUT_MS. */
  writeDigest(userId: string): Promise<DigestView | WorkflowPending> {
    return this.request('POST', `${this.user(userId)}/digests`, undefined, this.waitTimeoutMs());
  }
}

/**
 * Options for the official `openai` client (or any OpenAI-compatible one) to talk through the memory
 * proxy: `new OpenAI(memoryProxyOptions({ baseUrl, apiKey, userId }))`. The memory API key travels
 * as the client's API key; the user (and optionally the conversation) as headers. With a user key
 * (`jmu_…`, the one to give a chat app) the key names the user and `userId` may be left out.
 */
export function memoryProxyOptions(opts: { baseUrl: string; apiKey: string; userId?: string; conversationId?: string }): { baseURL: string; apiKey: string; defaultHeaders: Record<string, string> } {
  return {
    baseURL: `${opts.baseUrl.replace(/\/$/, '')}/proxy/v1`,
    apiKey: opts.apiKey,
    defaultHeaders: { ...(opts.userId ? { 'X-Memory-User': opts.userId } : {}), ...(opts.conversationId ? { 'X-Memory-Conversation': opts.conversationId } : {}) },
  };
}

/**
 * The URL and headers an MCP client needs for the Streamable HTTP endpoint (`/mcp`) of one user.
 * With a user key (`jmu_…`) the key names the user and `userId` may be left out.
 */
export function memoryMcpEndpoint(opts: { baseUrl: string; apiKey: string; userId?: string }): { url: string; headers: Record<string, string> } {
  return { url: `${opts.baseUrl.replace(/\/$/, '')}/mcp`, headers: { Authorization: `Bearer ${opts.apiKey}`, ...(opts.userId ? { 'X-Memory-User': opts.userId } : {}) } };
}
