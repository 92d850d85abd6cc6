import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { endPageSession, purgedSince, redeemSignInCode } from '../../account/page-tokens';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import type { ApiDeps } from '../deps';
import { PAGE_API_HEADERS, PAGE_SECURITY_HEADERS, PAGE_SESSION_ROUTE, pageTokens, refuseCrossSite, setSessionCookie } from '../page-session';
import { userParams } from '../schemas';

const WEB_DIR = fileURLToPath(new URL('../../../web/', import.meta.url));

const FILES: Record<string, { file: string; type: string }> = {
  '/app': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

const signInView = z.object({
  code: z.string().describe('One-time sign-in code for this user (single use, expires at `expiresAt`)'),
  url: z.string().describe('Path of the page with the code in its fragment; prefix it with the public origin of this service'),
  expiresAt: z.string().describe('The code must be used before this time'),
  sessionTtlSeconds: z.number().describe('How long the page session lasts once the code is used'),
});

/**
 * The memory page: plain HTML, CSS and one script, read once at start and served without auth
 * (they hold no data), under a strict CSP. Sign-in is per user (see page-session.ts): the tenant
 * mints a one-time code, the page exchanges it for a session cookie bound to that user.
 */
export const pageRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const tokens = pageTokens(deps);

    for (const [path, { file, type }] of Object.entries(FILES)) {
      const body = readFileSync(`${WEB_DIR}${file}`);
      app.get(path, { schema: { hide: true }, config: { public: true } }, async (_request, reply) => reply.headers(PAGE_SECURITY_HEADERS).header('content-type', type).header('cache-control', 'no-cache').send(body));
    }
    app.get('/app/', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => reply.headers(PAGE_SECURITY_HEADERS).redirect('/app'));

    app.post(
      '/v1/users/:userId/page-token',
      {
        // The tenant's decision, like minting a user key: a per-user key (a device's config) must
        // not mint page sessions, which are signed, not stored, and so outlive the key's revocation
        // and expiry (PAGE_TOKEN_TTL_SECONDS past either).
        config: { tenantOnly: true },
        schema: {
          summary: "Sign-in link to this user's memory page: a one-time code the page exchanges for a session limited to this user",
          params: userParams,
          response: { 201: signInView },
        },
      },
      async (request, reply) => {
        // Set by the API-key auth: a page session cannot reach this route, so it cannot extend itself.
        const tenantId = request.tenantId;
        if (!tenantId || request.pageSession) throw new MemoryServiceError(ErrorCode.unauthorized, 'an API key is required');
        const { userId } = request.params;
        const { token, expiresAt } = tokens.issue('code', { tenantId, userId }, new Date());
        return reply
          .status(201)
          .header('cache-control', 'no-store')
          .send({ code: token, url: `/app#code=${token}`, expiresAt: expiresAt.toISOString(), sessionTtlSeconds: deps.config.page.sessionTtlSeconds });
      },
    );

    // The page calls this the moment it loads with a code; no API key, the code is the credential.
    app.post(
      '/app/session',
      // Public: the one-time code in the body is the credential.
      { config: { public: true }, schema: { hide: true, body: z.strictObject({ code: z.string().min(1).max(2048) }) } },
      async (request, reply) => {
        reply.headers(PAGE_API_HEADERS);
        // Only the page itself may sign in: a form or script on another site could otherwise sign
        // the visitor in as a user of the attacker's choosing (login CSRF).
        refuseCrossSite(request, { marker: false });
        const now = new Date();
        const check = tokens.check('code', request.body.code, now);
        if (!check.ok) {
          throw new MemoryServiceError(ErrorCode.unauthorized, check.reason === 'expired' ? 'this sign-in link has expired: ask for a new one' : 'invalid sign-in link', { reason: check.reason === 'expired' ? 'expired' : 'invalid' });
        }
        const { t: tenantId, u: userId, jti, exp } = check.claims;
        if (!deps.tenants.some((t) => t.tenantId === tenantId)) throw new MemoryServiceError(ErrorCode.unauthorized, 'invalid sign-in link', { reason: 'invalid' });
        // A link minted before the user was erased opens nothing after it.
        if (await purgedSince(deps, { tenantId, userId, issuedAtMs: tokens.issuedAt('code', check.claims) })) {
          throw new MemoryServiceError(ErrorCode.unauthorized, 'this sign-in link ended when the user was erased: ask for a new one', { reason: 'purged' });
        }
        if (!(await redeemSignInCode(deps, { codeId: jti, expiresAt: new Date(exp * 1000), now }))) {
          throw new MemoryServiceError(ErrorCode.unauthorized, 'this sign-in link was already used: ask for a new one', { reason: 'used' });
        }
        const session = tokens.issue('session', { tenantId, userId }, now);
        setSessionCookie(request, reply, userId, session.token, deps.config.page.sessionTtlSeconds);
        return { userId, expiresAt: session.expiresAt.toISOString() };
      },
    );

    app.delete(
      '/v1/users/:userId/page-session',
      { config: PAGE_SESSION_ROUTE, schema: { summary: "Sign the memory page out (ends this browser's page session for good)", params: userParams, response: { 204: z.null() } } },
      async (request, reply) => {
        const session = request.pageSession;
        if (session) await endPageSession(deps, { sessionId: session.id, expiresAt: session.expiresAt });
        setSessionCookie(request, reply, request.params.userId, '', 0);
        return reply.status(204).send(null);
      },
    );
  };
