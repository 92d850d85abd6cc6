import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerForWrite, takeBackRegistration, type UserRegistration } from '../account/settings';
import type { ApiDeps } from './deps';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { SubjectKeys } from '../security/subject';
import { authenticatePageSession, type PageSessionDeps } from './page-session';
import { userIdSchema } from './schemas';
import { looksLikeUserApiKey, USER_API_KEY_PREFIX } from '../security/user-api-key-token';
import { authenticateUserKey, type UserKeyCredential } from '../account/user-keys';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant whose API key authenticated the request. */
    tenantId?: string;
    /** The storage key of (tenant, :userId) — what every service and store calls `userId`. */
    userKey?: string;
    /** The tenant's own id of the user, on routes that take it from a header (`config.userFromHeader`). */
    headerUserId?: string;
    /** Set when a per-user key (`jmu_…`) authenticated the request: it reaches this one user only. */
    userCredential?: UserKeyCredential;
    /** The registration of a user id seen for the first time that this request made, on routes that take it back when they refuse. */
    userRegistration?: UserRegistration;
  }
  interface FastifyContextConfig {
    /** Served without a key. Only routes that hold no data may say so. */
    public?: boolean;
    /** A POST that only reads (recall, search): it registers no user. */
    readOnly?: boolean;
    /**
     * The route has no `:userId`: the user is named by this request header (lower case, e.g.
     * `x-memory-user`), checked like the path parameter, and reached through the key's tenant.
     * For entry points whose URL is fixed by a protocol: MCP (/mcp) and the OpenAI proxy.
     */
    userFromHeader?: string;
    /**
     * Whether this request registers its user, for routes where that depends on the body, and
     * `false` for writes on what a user must have already (a conversation, a memory, a reminder by
     * id), which answer 404 for a user who has nothing, and for routes whose handler registers per
     * write itself (/mcp: memory_add, src/mcp/service-backend.ts); default: every POST/PUT/PATCH
     * that is not `readOnly`.
     */
    registersUser?: (body: unknown) => boolean;
    /**
     * The route's refusals that need none of the user's data, run just before a user id seen for
     * the first time is registered (after the schema, before the new-user budget), so such a
     * refusal registers nobody. The handler still runs them for users that exist.
     */
    beforeRegistration?: (request: FastifyRequest) => Promise<void> | void;
    /**
     * When the route refuses (status 400 or more) a request that registered its user, the
     * registration is taken back (src/account/settings.ts, registerForWrite). Only for routes that
     * write nothing after their answer: a write left running would find its user gone.
     */
    takesBackRegistration?: boolean;
    /** Only the tenant key reaches this route: a per-user key is refused (403) even for its own user. */
    tenantOnly?: boolean;
  }
  interface FastifyInstance {
    /** Drops the cached owner of a purged user, so the next request registers them again. */
    forgetUser(userId: string): void;
  }
}

const digest = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/**
 * Compares the presented key with every configured key's digest, all of them every time: equal-
 * length digests make `timingSafeEqual` usable, and visiting every entry keeps the time the same
 * whether the key matches the first tenant, the last or none.
 */
export function tenantForKey(tenants: readonly { tenantId: string; digest: Buffer }[], presented: string): string | undefined {
  const d = digest(presented);
  let found: string | undefined;
  for (const t of tenants) {
    if (timingSafeEqual(t.digest, d) && found === undefined) found = t.tenantId;
  }
  return found;
}

/**
 * Deny by default. Whether a request needs a key is decided on the route the router matched
 * (`request.routeOptions`), never on the raw URL: the router decodes `%76`, collapses nothing and
 * reads absolute-form targets differently from a string prefix test, and every such difference was
 * a way in. Only routes that declare `config.public` skip the key; an unmatched path needs one too,
 * so probing for routes without a key learns nothing.
 */
export function installAuth(
  app: FastifyInstance,
  deps: PageSessionDeps & Pick<ApiDeps, 'users' | 'userApiKeys'> & { subjects: SubjectKeys },
  hooks: { /** Runs before a user unknown to the database is registered; may refuse it (429). */ beforeNewUser?: (request: FastifyRequest) => Promise<void> } = {},
): void {
  const tenants = deps.tenants.map((t) => ({ tenantId: t.tenantId, digest: digest(t.key) }));
  // The prefix alone routes a key to the per-user lookup: a tenant key spelled so could never be used.
  for (const t of deps.tenants) {
    if (looksLikeUserApiKey(t.key)) throw new Error(`API_KEYS: the key of tenant "${t.tenantId}" starts with "${USER_API_KEY_PREFIX}", which marks per-user keys; choose another key`);
  }

  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.routeOptions.config?.public === true) return;
    // Without a key, the memory page's session cookie — on the routes the page calls, for its own user.
    if (request.headers.authorization === undefined) {
      const page = await authenticatePageSession(request, deps);
      if (page) {
        request.tenantId = page.tenantId;
        return;
      }
    }
    const header = request.headers.authorization ?? '';
    const match = /^Bearer +([\x21-\x7E]+)$/i.exec(header);
    if (!match) throw new MemoryServiceError(ErrorCode.unauthorized, 'missing "Authorization: Bearer <key>" header');
    if (looksLikeUserApiKey(match[1]!)) {
      const credential = await authenticateUserKey(deps, match[1]!, new Date());
      // A tenant removed from API_KEYS loses its users' keys with its own.
      if (!deps.tenants.some((t) => t.tenantId === credential.tenantId)) throw new MemoryServiceError(ErrorCode.unauthorized, 'unknown API key', { reason: 'invalid' });
      request.tenantId = credential.tenantId;
      request.userCredential = credential;
      confineToOwnUser(request, credential);
      return;
    }
    const tenantId = tenantForKey(tenants, match[1]!);
    if (!tenantId) throw new MemoryServiceError(ErrorCode.unauthorized, 'unknown API key');
    request.tenantId = tenantId;
    // A route whose user comes from a header: checked here, before the body is read and before the
    // rate limits count per user. No header, no user: such a route never runs unscoped.
    const userHeader = request.routeOptions.config?.userFromHeader;
    if (userHeader !== undefined) request.headerUserId = userFromHeader(request, userHeader);
  });

  // After validation, so the user id is the schema-checked one.
  app.addHook('preHandler', async (request: FastifyRequest) => {
    const userId = (request.params as { userId?: unknown } | undefined)?.userId ?? request.headerUserId;
    if (userId === undefined) return;
    if (typeof userId !== 'string' || !request.tenantId) {
      // Fails closed: a user route reached without a tenant is a wiring bug, never a free pass.
      throw new MemoryServiceError(ErrorCode.unauthorized, 'this route needs an API key');
    }
    request.userKey = deps.subjects.userKey({ tenantId: request.tenantId, userId });
    // Checked in onRequest already; the user keys must agree too, or the request reaches nobody.
    if (request.userCredential && request.userCredential.userKey !== request.userKey) throw forbiddenForUserKey('other_user');
    // Reads never create a user; a write registers (tenant, user) once, for export and for the
    // foreign keys of the user's rows. Recall and search are reads sent as POST: they stay off
    // the registration (and its query) on the hot path.
    const config = request.routeOptions.config;
    const writes = config?.registersUser ? config.registersUser(request.body) : !['GET', 'HEAD', 'DELETE'].includes(request.method) && config?.readOnly !== true;
    if (!writes) return;
    const registration = await registerForWrite(deps, { userKey: request.userKey, tenantId: request.tenantId, externalId: userId }, async () => {
      // The request's own refusals first: a request refused anyway spends no new-user budget.
      await config?.beforeRegistration?.(request);
      await hooks.beforeNewUser?.(request);
    });
    if (registration && config?.takesBackRegistration === true) request.userRegistration = registration;
  });

  // Before the answer leaves, so a client that reads right after a refusal finds no user.
  app.addHook('onSend', async (request, reply, payload) => {
    const registration = request.userRegistration;
    if (!registration || reply.statusCode < 400) return payload;
    request.userRegistration = undefined;
    try {
      await takeBackRegistration(deps, registration);
    } catch (err) {
      // The refusal stands; the user stays registered, with nothing stored, as before take-backs.
      request.log.warn({ err }, 'a refused first write could not take its user registration back');
    }
    return payload;
  });
}

/**
 * `registersUser` of a write on something a user must have already (a conversation to end, a
 * memory to confirm, a reminder to snooze): for a user id seen for the first time it can only
 * answer 404, and that refusal registers nobody.
 */
export const registersNoUser = (): boolean => false;

const forbiddenForUserKey = (reason: 'other_user' | 'tenant_only') =>
  new MemoryServiceError(
    ErrorCode.forbidden,
    reason === 'other_user' ? "a user key reaches its own user only: this request names another user" : 'this route needs the tenant key: a user key cannot reach it',
    { reason },
  );

/**
 * Where a user key may go, decided on the matched route before its body is read: routes of its own
 * user — named by the `:userId` path parameter, or by the route's user header, which it may leave
 * out — and never a `tenantOnly` route nor one without a user (a tenant-wide route). Another user's
 * id is a 403, not a 404, so the answer is the same whether that user exists or not. An unmatched
 * path goes on to its 404, as it does for a tenant key.
 */
function confineToOwnUser(request: FastifyRequest, credential: UserKeyCredential): void {
  if (request.is404) return;
  const config = request.routeOptions.config;
  if (config?.tenantOnly === true) throw forbiddenForUserKey('tenant_only');
  const fromPath = (request.params as { userId?: unknown } | undefined)?.userId;
  if (fromPath !== undefined) {
    if (fromPath !== credential.userId) throw forbiddenForUserKey('other_user');
    return;
  }
  const header = config?.userFromHeader;
  if (header === undefined) throw forbiddenForUserKey('tenant_only');
  if (request.headers[header] !== undefined && userFromHeader(request, header) !== credential.userId) throw forbiddenForUserKey('other_user');
  request.headerUserId = credential.userId;
}

/** The user id a header names, held to the same rules as the `:userId` path parameter (400 otherwise). */
function userFromHeader(request: FastifyRequest, header: string): string {
  const value = request.headers[header];
  if (value === undefined) throw new MemoryServiceError(ErrorCode.validationFailed, `missing "${header}" header: the user this request is for`, { header });
  const parsed = userIdSchema.safeParse(value);
  if (!parsed.success) throw new MemoryServiceError(ErrorCode.validationFailed, `invalid "${header}" header: ${parsed.error.issues[0]?.message ?? 'not a user id'}`, { header });
  return parsed.data;
}

/** The tenant's own id of the request's user: the `:userId` path parameter or the route's user header. */
export function requestUserId(request: FastifyRequest): string | undefined {
  const fromPath = (request.params as { userId?: unknown } | undefined)?.userId;
  if (typeof fromPath === 'string') return fromPath;
  return request.headerUserId;
}

/** The user key the auth hook resolved; throws rather than let a handler run unscoped. */
export function userKeyOf(request: FastifyRequest): string {
  if (!request.userKey) throw new MemoryServiceError(ErrorCode.unauthorized, 'no user resolved for this request');
  return request.userKey;
}
