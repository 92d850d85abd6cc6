import { metrics } from '../observability/metrics';
import { createHash } from 'node:crypto';
import rateLimit, { type CreateRateLimitOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppConfig, RateLimitBudget } from '../config';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { shouldRewrite } from '../core/recall/query-rewrite';
import { mcpBudgets } from '../mcp/budgets';
import { policyFor, proxyCostUnits } from '../proxy/policy';
import { requestUserId } from './auth';
import { PostgresRateLimitStore } from './postgres-rate-limit-store';

/**
 * Rate limits and request body sizes, so one client (or one user) cannot exhaust the model, the
 * database or the workers that every tenant shares.
 *
 * Budgets, each counted per (tenant, user) and per API key, in fixed windows of
 * RATE_LIMIT_WINDOW_SECONDS:
 * - `recall`: recall and conversation search — the hot path, one per chat message;
 * - `writes`: messages, memories, reminders, notifications, settings;
 * - `llm`: requests that ask for the chat model's work — a recall that will be rewritten,
 *   POST /digests, ending a conversation (extraction) and storing a memory (conflict judge).
 *   They count whether or not a model is configured, so adding one changes no client's limits.
 *   A proxied chat completion spends its cost in units (choices × completion tokens, see
 *   src/proxy/policy.ts), since it runs on the operator's upstream key;
 * - `exports`: units of export work — one when an export starts (refused when none is left), then
 *   one per page of rows it read, charged once the snapshot is read (`app.budgets.charge`);
 * and `newUsers`, per tenant: first contact with a user id creates a user row (and, with their
 * first message, two Temporal Schedules), so a tenant cannot mint ids without bound.
 *
 * The counters live in PostgreSQL when the API is given its pool (src/api/postgres-rate-limit-store.ts),
 * so every API process behind a load balancer spends the same budget; without one (unit tests)
 * they are @fastify/rate-limit's in-memory store, per process.
 */

export type Budget = RateLimitBudget;
type Scope = 'user' | 'key';

const KiB = 1024;
/** Fastify's limit for every body a route below does not size (64 KiB). */
export const DEFAULT_BODY_LIMIT = 64 * KiB;
/** Bodies of a few short fields: settings, snooze, reschedule, end, digest. */
const SMALL_BODY = 4 * KiB;
/** Counters one limiter keeps (LRU); past it the least recently seen keys start over. */
const LIMITER_KEYS = 20_000;

export interface RouteLimits {
  /** Largest request body in bytes (413 `payload_too_large` past it). */
  bodyLimit: number;
  /** The budgets one request spends, in the order they are checked; a budget named k times spends k units. */
  budgets(body: unknown, request?: { tenantId?: string }): Budget[];
}

const spends =
  (...budgets: Budget[]) =>
  () =>
    budgets;

/** Whether a recall asks for the LLM rewrite: the same decision the recall service takes. */
export function recallBudgets(body: unknown, config: Pick<AppConfig, 'recall'>): Budget[] {
  const b = (body ?? {}) as { query?: unknown; rewrite?: unknown; recentMessages?: unknown };
  const query = typeof b.query === 'string' ? b.query : '';
  const rewrite = typeof b.rewrite === 'boolean' ? b.rewrite : undefined;
  const recent = Array.isArray(b.recentMessages) ? b.recentMessages.filter((m): m is string => typeof m === 'string') : [];
  return shouldRewrite(config.recall.queryRewrite, rewrite, query, recent) ? ['recall', 'llm'] : ['recall'];
}

/**
 * Every route with a body or a budget, by `METHOD url` as the router knows it. Body limits are
 * sized to what the route's schema accepts at most (UTF-8, three bytes per UTF-16 unit).
 */
export function routeLimits(config: Pick<AppConfig, 'recall' | 'maxMessagesBodyBytes'> & Partial<Pick<AppConfig, 'proxy'>>): Record<string, RouteLimits> {
  // Method and path apart, so no string here reads like SQL to the user-scoping guard.
  const at = (method: string, path: string) => `${method} /v1/users/:userId${path}`;
  return {
    // query 20,000 + recentMessages 20 × 8,000 characters: about 540 KB of CJK text.
    [at('POST', '/recall')]: { bodyLimit: 1024 * KiB, budgets: (body) => recallBudgets(body, config) },
    [at('POST', '/conversations/search')]: { bodyLimit: 16 * KiB, budgets: spends('recall') },
    // Up to 1,000 messages per call: the one route that takes a large body.
    [at('POST', '/conversations/:conversationId/messages')]: { bodyLimit: config.maxMessagesBodyBytes, budgets: spends('writes') },
    [at('POST', '/conversations/:conversationId/end')]: { bodyLimit: SMALL_BODY, budgets: spends('writes', 'llm') },
    // text 4,000 characters + metadata (8 KiB as JSON) + keywords.
    [at('POST', '/memories')]: { bodyLimit: 64 * KiB, budgets: spends('writes', 'llm') },
    [at('DELETE', '/memories/:id')]: { bodyLimit: SMALL_BODY, budgets: spends('writes') },
    [at('POST', '/memories/:id/restore')]: { bodyLimit: SMALL_BODY, budgets: spends('writes') },
    [at('POST', '/reminders')]: { bodyLimit: 16 * KiB, budgets: spends('writes') },
    [at('POST', '/reminders/:id/snooze')]: { bodyLimit: SMALL_BODY, budgets: spends('writes') },
    [at('POST', '/reminders/:id/dismiss')]: { bodyLimit: SMALL_BODY, budgets: spends('writes') },
    [at('PATCH', '/reminders/:id')]: { bodyLimit: SMALL_BODY, budgets: spends('writes') },
    [at('DELETE', '/reminders/:id')]: { bodyLimit: SMALL_BODY, budgets: spends('writes') },
    // 200 UUIDs.
    [at('POST', '/notifications/read')]: { bodyLimit: 16 * KiB, budgets: spends('writes') },
    [at('PUT', '/settings')]: { bodyLimit: SMALL_BODY, budgets: spends('writes') },
    [at('POST', '/digests')]: { bodyLimit: SMALL_BODY, budgets: spends('writes', 'llm') },
    // Entry points whose user is a header (X-Memory-User), counted per that user like the rest.
    // MCP: each tool call spends what its route would (src/mcp/budgets.ts); initialize and tools/list nothing.
    ['POST /mcp']: { bodyLimit: 256 * KiB, budgets: mcpBudgets },
    // The proxy: a recall, the two recorded turns, and the upstream model's answer. The whole chat
    // history comes with every request, so it takes the size of a message batch.
    ['POST /proxy/v1/chat/completions']: {
      bodyLimit: config.maxMessagesBodyBytes,
      budgets: (body, request) => {
        const proxy = config.proxy;
        const units = proxy ? proxyCostUnits(body, policyFor(proxy, request?.tenantId), proxy.tokensPerUnit) : 1;
        return ['recall', 'writes', ...Array<Budget>(units).fill('llm')];
      },
    },
    // The first unit of an export; the rest is charged by the route once it knows the cost.
    [at('GET', '/export')]: { bodyLimit: SMALL_BODY, budgets: spends('exports') },
  };
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The budgets a request spends. A route missing from the table spends `writes` when it can
 * change something under /v1, so a route added later is never unlimited; reads spend none.
 */
export function budgetsFor(table: Record<string, RouteLimits>, method: string, url: string | undefined, body: unknown, request?: { tenantId?: string }): Budget[] {
  if (!url) return [];
  const route = table[`${method} ${url}`];
  if (route) return route.budgets(body, request);
  return !READS.has(method) && url.startsWith('/v1/') ? ['writes'] : [];
}

/** Counter keys. Tenant ids and user ids cannot hold '|', so no two subjects share a key. */
export const limitKey = {
  user: (tenantId: string, userId: string) => `u|${tenantId}|${userId}`,
  /** The API key itself is never kept, only a digest of it. */
  apiKey: (presentedKey: string) => `k|${createHash('sha256').update(presentedKey, 'utf8').digest('base64url').slice(0, 22)}`,
  tenant: (tenantId: string) => `t|${tenantId}`,
};

/** The (tenant, user) counter key of a request, when it names a user. */
export function userOf(request: FastifyRequest): string | undefined {
  const userId = requestUserId(request);
  return request.tenantId && userId !== undefined ? limitKey.user(request.tenantId, userId) : undefined;
}

/** The API key counter key of a request (a digest; the tenant's when no Bearer key was presented, e.g. a page session). */
export function apiKeyOf(request: FastifyRequest): string {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  // Auth has accepted the request, so a key was presented; the tenant is the fallback all the same.
  return match ? limitKey.apiKey(match[1]!) : limitKey.tenant(request.tenantId ?? '');
}

const BUDGET_WORDS: Record<Budget | 'newUsers', string> = { recall: 'recall', writes: 'write', llm: 'LLM-backed', exports: 'export', newUsers: 'new-user' };
const SCOPE_WORDS: Record<Scope | 'tenant', string> = { user: 'for this user', key: 'for this API key', tenant: 'for this tenant' };

function rateLimited(budget: Budget | 'newUsers', scope: Scope | 'tenant', limit: number, windowSeconds: number, ttlMs: number): MemoryServiceError {
  const retryAfterSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
  metrics.rateLimited(budget, scope);
  return new MemoryServiceError(
    ErrorCode.rateLimited,
    `too many ${BUDGET_WORDS[budget]} requests ${SCOPE_WORDS[scope]}: at most ${limit} per ${windowSeconds} s; retry in ${retryAfterSeconds} s`,
    { budget, scope, limit, windowSeconds, retryAfterSeconds },
  );
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

export interface RateLimits {
  /**
   * Spends one from the tenant's new-user budget for a user id seen for the first time; throws
   * 429 `rate_limited` when it is spent. Concurrent first requests for one id spend it once.
   * Auth calls it before it creates the user.
   */
  admitNewUser(request: FastifyRequest): Promise<void>;
  /**
   * Spends `units` more of a budget for this request's user and key, after the work is done (its
   * cost known only then). Never throws: what is over the limit is refused on the next request.
   */
  charge(request: FastifyRequest, budget: Budget, units: number): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The rate limits, for routes that charge a cost known only after the work (exports). */
    budgets: RateLimits;
  }
}

/**
 * Registers @fastify/rate-limit (no global limit), the per-route body limits and one
 * preHandler that spends the request's budgets. Call before the routes are registered and
 * before auth's preHandler, so a refused request costs no database query.
 */
export async function installRateLimits(
  app: FastifyInstance,
  config: Pick<AppConfig, 'rateLimits' | 'recall' | 'maxMessagesBodyBytes'>,
  shared?: { db: ConstructorParameters<typeof PostgresRateLimitStore>[0] },
): Promise<RateLimits> {
  const { windowSeconds, perUser, perKey, newUsersPerTenant } = config.rateLimits;
  const table = routeLimits(config);

  app.addHook('onRoute', (route) => {
    if (route.bodyLimit !== undefined) return;
    for (const method of [route.method].flat()) {
      const limits = table[`${method} ${route.url}`];
      if (limits) route.bodyLimit = limits.bodyLimit;
    }
  });

  if (shared) {
    let lastFallbackWarning = 0;
    const store = new PostgresRateLimitStore(
      shared.db,
      (err) => app.log.warn({ err }, 'sweep of expired rate-limit windows failed'),
      (err) => {
        // Once a minute at most: during an outage every request would log it.
        if (Date.now() - lastFallbackWarning < 60_000) return;
        lastFallbackWarning = Date.now();
        app.log.warn({ err }, 'rate-limit counters unreachable in PostgreSQL: counting per process until it is back');
      },
      LIMITER_KEYS,
    );
    // The plugin constructs the store itself; this class hands it the one already made.
    await app.register(rateLimit, { global: false, store: class { constructor() { return store; } } as never });
  } else {
    await app.register(rateLimit, { global: false });
  }
  const limiter = (name: string, max: number, keyGenerator: (r: FastifyRequest) => string): Limiter | undefined => {
    if (max <= 0) return undefined;
    // `cache` sizes the limiter's own in-memory store (read by the store, not in the typings).
    // The budget's name leads the key: the shared store keeps every limiter in one table.
    const options: CreateRateLimitOptions & { cache: number } = { max, timeWindow: windowSeconds * 1000, keyGenerator: (r) => `${name}|${keyGenerator(r)}`, cache: LIMITER_KEYS };
    return app.createRateLimit(options);
  };
  const limiters: Record<Budget, Record<Scope, Limiter | undefined>> = {
    recall: { user: limiter('recall', perUser.recall, (r) => userOf(r)!), key: limiter('recall', perKey.recall, apiKeyOf) },
    writes: { user: limiter('writes', perUser.writes, (r) => userOf(r)!), key: limiter('writes', perKey.writes, apiKeyOf) },
    llm: { user: limiter('llm', perUser.llm, (r) => userOf(r)!), key: limiter('llm', perKey.llm, apiKeyOf) },
    exports: { user: limiter('exports', perUser.exports, (r) => userOf(r)!), key: limiter('exports', perKey.exports, apiKeyOf) },
  };
  const limits: Record<Scope, Record<Budget, number>> = { user: perUser, key: perKey };

  app.addHook('preHandler', async (request) => {
    if (!request.tenantId) return; // a public route
    const budgets = budgetsFor(table, request.method, request.routeOptions.url, request.body, request);
    const hasUser = userOf(request) !== undefined;
    for (const budget of budgets) {
      for (const scope of ['user', 'key'] as const) {
        const limit = limiters[budget][scope];
        if (!limit || (scope === 'user' && !hasUser)) continue;
        const state = await limit(request);
        if (!state.isAllowed && state.isExceeded) throw rateLimited(budget, scope, limits[scope][budget], windowSeconds, state.ttl);
      }
    }
  });

  const newUsers = limiter('newUsers', newUsersPerTenant, (r) => limitKey.tenant(r.tenantId ?? ''));
  // Admissions of the current window, so repeated and concurrent first requests count once.
  const admitted = new Map<string, { until: number; admission: Promise<void> }>();
  const rateLimits: RateLimits = {
    async charge(request, budget, units) {
      const hasUser = userOf(request) !== undefined;
      for (const scope of ['user', 'key'] as const) {
        const limit = limiters[budget][scope];
        if (!limit || (scope === 'user' && !hasUser)) continue;
        // Past the limit one more unit changes nothing: the counter already refuses.
        for (let i = 0; i < Math.min(units, limits[scope][budget] + 1); i++) {
          const state = await limit(request);
          if (!state.isAllowed && state.isExceeded) break;
        }
      }
    },
    async admitNewUser(request) {
      const user = userOf(request);
      if (!newUsers || !user) return;
      const now = Date.now();
      const known = admitted.get(user);
      if (known && known.until > now) return known.admission;
      const admission = newUsers(request).then((state) => {
        if (!state.isAllowed && state.isExceeded) throw rateLimited('newUsers', 'tenant', newUsersPerTenant, windowSeconds, state.ttl);
      });
      admitted.delete(user);
      admitted.set(user, { until: now + windowSeconds * 1000, admission });
      if (admitted.size > LIMITER_KEYS) admitted.delete(admitted.keys().next().value!);
      // A refused id is charged again on its next try, like any other request.
      admission.catch(() => {
        if (admitted.get(user)?.admission === admission) admitted.delete(user);
      });
      return admission;
    },
  };
  app.decorate('budgets', rateLimits);
  return rateLimits;
}
