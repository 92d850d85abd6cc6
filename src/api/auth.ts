import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { userStore } from '../adapters/postgres/user-repository';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { ApiDeps } from './deps';

declare module 'fastify' {
  interface FastifyRequest {
    tenantId?: string;
  }
  interface FastifyInstance {
    /** Drops the cached owner of a purged user, so the next request registers them again. */
    forgetUser(userId: string): void;
  }
}

function sameKey(a: string, b: string): boolean {
  const A = Buffer.from(a);
  const B = Buffer.from(b);
  return A.length === B.length && timingSafeEqual(A, B);
}

/**
 * Bearer-key authentication for every /v1 route, and tenant isolation: a user id belongs to the
 * tenant that first used it, and another tenant's key gets 403 for it. Ownership never changes,
 * so it is cached to keep the recall hot path free of an extra query.
 */
export function installAuth(app: FastifyInstance, deps: Pick<ApiDeps, 'tenants' | 'pool'>): void {
  const owners = new Map<string, string>();
  const OWNER_CACHE = 50_000;
  app.decorate('forgetUser', (userId: string) => {
    owners.delete(userId);
  });

  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (!request.url.startsWith('/v1/')) return;
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new MemoryServiceError(ErrorCode.unauthorized, 'missing "Authorization: Bearer <key>" header');
    const tenant = deps.tenants.find((t) => sameKey(t.key, match[1]!));
    if (!tenant) throw new MemoryServiceError(ErrorCode.unauthorized, 'unknown API key');
    request.tenantId = tenant.tenantId;
  });

  app.addHook('preHandler', async (request: FastifyRequest) => {
    const userId = (request.params as { userId?: string } | undefined)?.userId;
    if (!request.tenantId || !userId) return;
    let owner = owners.get(userId);
    if (!owner) {
      owner = await userStore.claim(deps.pool, userId, request.tenantId);
      if (owners.size >= OWNER_CACHE) owners.delete(owners.keys().next().value!);
      owners.set(userId, owner);
    }
    if (owner !== request.tenantId) {
      throw new MemoryServiceError(ErrorCode.forbidden, 'this API key may not access this user', { userId });
    }
  });
}
