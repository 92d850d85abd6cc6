/** The request and response shapes of the HTTP API, as the client sends and receives them. */
import type { MemoryType } from './generated-memory-types.js';

export type MemoryStatus = 'active' | 'superseded' | 'expired' | 'archived';

/**
 * HTTP 202: the workflow behind the request was accepted but did not finish within the server's
 * WORKFLOW_WAIT_TIMEOUT_MS. It goes on; repeat the request (with the same `requestId` where there
 * is one) or read the record later.
 */
export interface WorkflowPending {
  workflowId: string;
  pending: true;
}

/** One scene of the navigation block (GET /v1/users/{userId}/scenes). */
export interface SceneView {
  id: string;
  label: string;
  memoryCount: number;
  hints: string[];
}

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
  /** How it arrived: extracted from the user's words, or written directly (a tenant-key app, an agent over MCP). */
  via: 'extraction' | 'api' | 'mcp';
  /** A directly written instruction waiting for the user's confirmation ({@link MemoryClient.confirmMemory}); not injected until then. */
  pending: boolean;
}

export interface RecallRequest {
  query: string;
  topK?: number;
  tokenBudget?: number;
  types?: MemoryType[];
  recentMessages?: string[];
  now?: string;
  timeZone?: string;
  /** Restrict the routes; 'time' and 'exchanges' are the episodic ones; 'graph' walks the entity graph. */
  routes?: ('ann' | 'bm25' | 'recent' | 'important' | 'type' | 'time' | 'exchanges' | 'graph')[];
  /** Ask the server's LLM to rewrite this message into extra queries (pronouns resolved from `recentMessages`); absent: the server's policy. */
  rewrite?: boolean;
}

/** A past exchange injected by recall (or found by conversation search), citable by its ids. */
export interface PastExchangeView {
  conversationId: string;
  date: string;
  messageIds: string[];
  userText: string;
  assistantText: string;
  score: number;
  routes: string[];
}

export interface ConversationSearchRequest {
  query: string;
  topK?: number;
  /** Budget in lines instead of topK exchanges (an exchange shows only the lines search found). */
  maxLines?: number;
  now?: string;
  timeZone?: string;
}

export interface ConversationSearchResponse {
  exchanges: {
    conversationId: string;
    date: string;
    messageIds: string[];
    user?: { id: string; text: string; at: string };
    assistant?: { id: string; text: string; at: string };
    score: number;
    routes: string[];
    inRange: boolean;
  }[];
  dateRanges: { text: string; start: string; end: string }[];
  timeZone: string;
  routes: { route: string; ok: boolean; ms: number; hits: number }[];
  error?: { code: string; message: string; routes: string[] };
}

export interface RecallResponse {
  context: { system: string; userPrefix: string };
  memories: { id: string; text: string; type: MemoryType; scope: string; score: number; routes: string[]; createdAt: string; source: Record<string, unknown>; via: 'extraction' | 'api' | 'mcp' }[];
  tokens: number;
  routes: { route: string; ok: boolean; ms: number; hits: number }[];
  error?: { code: string; message: string; routes: string[] };
  /** Past exchanges injected (ranked with the memories on one score, shown after them). */
  pastExchanges: PastExchangeView[];
  /** Ids of the messages injected, for citing. */
  injectedMessageIds: string[];
  /** Date ranges the query named (the time route). */
  dateRanges?: { text: string; start: string; end: string }[];
  /** Extra queries the LLM rewrite proposed and recall searched (route "rewrite"). */
  rewrittenQueries?: string[];
  /** The persona at the top of `context.system`: the memories it states (not repeated in `memories`), its builder and build time. */
  persona?: { memoryIds: string[]; builder: string; builtAt: string };
  /** Set when the query was read as a vague follow-up: the open pain point it was taken to mean (null: none open). */
  followUp?: { memoryId: string | null };
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
  /** How the candidate this decision is about arrived (decision rows only). */
  via?: 'extraction' | 'api' | 'mcp';
  createdAt: string;
}

/** A per-user API key as listed: never its secret. */
export interface UserKeyView {
  id: string;
  label: string | null;
  createdAt: string;
  expiresAt: string | null;
  /** Last successful use, to the minute. */
  lastUsedAt: string | null;
}

/** `POST /v1/users/{userId}/keys`: the key and its secret (`jmu_…`), which is shown this once. */
export interface MintedUserKey {
  key: UserKeyView;
  secret: string;
}

/** `GET /v1/users/{userId}`: the tenant and the pseudonymous user key Temporal knows the user by. */
export interface UserInfo {
  userId: string;
  tenantId: string;
  /** `MemoryUserId` in Temporal; see `@jarvis-memory/client/temporal`. */
  userKey: string;
  /** Visibility query for the user's workflows. */
  temporalQuery: string;
}

/** A sign-in link to the user's memory page: hand `url` (prefixed with the service's public origin) to that one user. */
export interface PageSignIn {
  /** One-time code, valid until `expiresAt`. */
  code: string;
  /** `/app#code=…`. */
  url: string;
  expiresAt: string;
  sessionTtlSeconds: number;
}

/** The export document (`format` `jarvis-memory.export/1`): every stored row of the user, section by section. */
export interface UserExportDocument {
  format: string;
  exportedAt: string;
  user: { userId: string; tenantId: string; createdAt: string } | null;
  settings: Record<string, unknown> | null;
  memories: Record<string, unknown>[];
  otherEvents: Record<string, unknown>[];
  conversations: Record<string, unknown>[];
  messages: Record<string, unknown>[];
  episodes: Record<string, unknown>[];
  reminders: Record<string, unknown>[];
  notifications: Record<string, unknown>[];
  digests: Record<string, unknown>[];
  entities: Record<string, unknown>[];
  relations: Record<string, unknown>[];
}

export interface PurgeResult {
  requestedAt: string;
  completedAt: string;
  counts: {
    postgres: Record<string, number>;
    chroma: Record<string, number>;
    schedulesDeleted: number;
    workflowsTerminated: number;
    workflowsDeleted: number;
    dataKeyDestroyed: boolean;
  };
}
