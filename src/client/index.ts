/**
 * Typed client for the jarvis-memory HTTP API. Errors arrive as `MemoryApiError` with the
 * server's machine-readable code; nothing here throws for a recall that degraded (check `error`).
 */

export type MemoryType = 'fact' | 'preference' | 'goal' | 'pain_point' | 'event' | 'instruction' | 'decision' | 'assistant_contribution';
export type MemoryStatus = 'active' | 'superseded' | 'expired' | 'archived';

export interface MemoryView {
  id: string;
  text: string;
  type: MemoryType;
  status: MemoryStatus;
  scope: 'global' | 'task';
  confidence: number;
  importance: number;
  importanceLevel: 'low' | 'medium' | 'high' | 'critical';
  frequencyCount: number;
  decayScore: number;
  emotionTags: string[];
  keywords: string[];
  source: { conversationId?: string; messageIds?: string[]; role?: 'user' | 'assistant'; via?: string };
  createdAt: string;
  updatedAt: string;
  lastRecalledAt: string | null;
  expiresAt: string | null;
  supersedes: string | null;
  supersededBy: string | null;
}

export interface RecallRequest {
  query: string;
  topK?: number;
  tokenBudget?: number;
  types?: MemoryType[];
  recentMessages?: string[];
  now?: string;
  timeZone?: string;
  routes?: ('ann' | 'bm25' | 'recent' | 'important' | 'type')[];
}

export interface RecallResponse {
  context: { system: string; userPrefix: string };
  memories: { id: string; text: string; type: MemoryType; scope: string; score: number; routes: string[]; createdAt: string; source: Record<string, unknown> }[];
  tokens: number;
  routes: { route: string; ok: boolean; ms: number; hits: number }[];
  error?: { code: string; message: string; routes: string[] };
}

export interface ChatMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  at?: string;
}

export interface Decision {
  action: 'ignore' | 'create' | 'reinforce' | 'update' | 'supersede' | 'forget';
  reason: string;
  memoryId?: string;
  affectedIds: string[];
  text: string;
  type: string;
  messageIds: string[];
  replayed: boolean;
}

export interface MemoryEventView {
  id: string;
  action: string;
  reason: string;
  before?: unknown;
  after?: unknown;
  workflowId?: string;
  runId?: string;
  conversationId?: string;
  messageIds?: string[];
  actor: string;
  createdAt: string;
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

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.fetchImpl(`${this.options.baseUrl.replace(/\/$/, '')}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.options.apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as unknown) : undefined;
    if (!res.ok) {
      const err = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
      throw new MemoryApiError(res.status, err?.code ?? 'http_error', err?.message ?? `HTTP ${res.status}`, err?.details);
    }
    return parsed as T;
  }

  private user(userId: string): string {
    return `/v1/users/${encodeURIComponent(userId)}`;
  }

  health(): Promise<{ status: string; checks: Record<string, { status: string; latencyMs: number; error?: string }> }> {
    return this.request('GET', '/healthz');
  }

  createMemory(userId: string, input: { text: string; type: MemoryType; scope?: 'global' | 'task'; confidence?: number; importance?: number; keywords?: string[]; metadata?: Record<string, unknown>; expiresAt?: string; at?: string; requestId?: string }): Promise<{ memory: MemoryView; decision: { action: string; reason: string }; workflowId: string }> {
    return this.request('POST', `${this.user(userId)}/memories`, input);
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

  recall(userId: string, input: RecallRequest): Promise<RecallResponse> {
    return this.request('POST', `${this.user(userId)}/recall`, input);
  }

  addMessages(userId: string, conversationId: string, messages: ChatMessage[]): Promise<{ accepted: string[]; duplicates: string[]; workflowId: string }> {
    return this.request('POST', `${this.user(userId)}/conversations/${encodeURIComponent(conversationId)}/messages`, { messages });
  }

  endConversation(userId: string, conversationId: string, opts: { wait: true }): Promise<{ workflowId: string; runId: string; result: { messagesProcessed: number; counts: Record<string, number>; decisions: Decision[] } }>;
  endConversation(userId: string, conversationId: string, opts?: { wait?: false }): Promise<{ workflowId: string; runId: string }>;
  endConversation(userId: string, conversationId: string, opts: { wait?: boolean } = {}): Promise<unknown> {
    return this.request('POST', `${this.user(userId)}/conversations/${encodeURIComponent(conversationId)}/end${opts.wait ? '?wait=true' : ''}`, {});
  }
}
