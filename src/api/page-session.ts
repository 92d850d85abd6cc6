import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isSignedOut, purgedSince } from '../account/page-tokens';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { ApiDeps } from './deps';

/*
 * How the memory page (/app) signs in — one user, never the tenant's API key in a browser.
 *
 *   1. The tenant's backend, holding the API key, calls POST /v1/users/{userId}/page-token and
 *      gets a one-time *sign-in code* and a link `/app#code=<code>` for that one user, which it
 *      hands to the user (a chat message, a button in its own app).
 *   2. The page reads the code from the fragment, removes it from the address bar
 *      (history.replaceState) and exchanges it at once: POST /app/session {code}. The server checks
 *      the signature and expiry and records the code's id in `page_token_uses`, so it works once.
 *   3. The answer sets the *page session*: an HttpOnly, SameSite=Strict cookie (Secure over https)
 *      whose Path is `/v1/users/{userId}`, so the browser sends it to that user's API paths only.
 *
 * Both the code and the session are HMAC-SHA256-signed claims {tenant, user, expiry, random id}
 * under ServiceSecrets.key('page-token'), with the kind bound into the MAC so a code is never
 * accepted as a session or the other way round. A session is accepted only on routes declaring
 * `config: { pageSession: true }` — decided on the matched route, not on the URL text — and only
 * when the route's `:userId` is the session's user; the tenant comes from the session.
 *
 * Threat model:
 *  - Link leaked (history, screenshot, a proxy that logs fragments, a shared chat): the code is
 *    single-use and short-lived (PAGE_CODE_TTL_SECONDS). After the page used it, it is worthless;
 *    unused, it opens that one user's page for at most one session — the same as the link itself.
 *    The fragment is never sent to a server nor put in a Referer, unlike a query string.
 *  - A script on the page (XSS): a strict CSP without inline script, and the session is HttpOnly,
 *    so a script cannot carry the credential away; the API key is never in the browser at all.
 *  - Another site: SameSite=Strict keeps the cookie off cross-site requests (no CSRF), the
 *    exchange refuses cross-site requests (no login CSRF through a forged form; JSON-only bodies
 *    already need a CORS preflight nobody answers), and frame-ancestors 'none' / X-Frame-Options
 *    stop clickjacking.
 *  - Stolen session (the cookie itself): bound to one (tenant, user), page routes only — it
 *    cannot mint new codes, read recall, export, or write memories — and it ends at its expiry
 *    (PAGE_TOKEN_TTL_SECONDS; an open event stream is closed then) or at sign-out, which records
 *    the session id as used, or at a purge of the user (DELETE /v1/users/{userId}): the purge's
 *    audit row revokes every session and unused sign-in code issued before it.
 *  - SECRET_KEY leaked: page tokens for any user can be forged; rotate it (which signs everyone out).
 *  - Not covered: a tenant handing the link to the wrong person; a user who opens a link crafted
 *    for another user of the same tenant is signed in as that user (the page shows whose memory
 *    it is); sessions already issued cannot be revoked by the tenant before their expiry.
 */

export const PAGE_SESSION_COOKIE = 'jm_page';

/** Route config of the routes the page calls: they accept a page session for their `:userId`. */
export const PAGE_SESSION_ROUTE = { pageSession: true } as const;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route accepts the memory page's session cookie (for its own `:userId` only). */
    pageSession?: boolean;
  }
  interface FastifyRequest {
    /** Set when the request was authenticated by a page session rather than an API key. */
    pageSession?: PageSession;
  }
}

export interface PageSession {
  tenantId: string;
  userId: string;
  /** The session token's random id (recorded at sign-out). */
  id: string;
  expiresAt: Date;
}

export type PageTokenKind = 'code' | 'session';
const PREFIX: Record<PageTokenKind, string> = { code: 'pc1', session: 'ps1' };

// iat (ms): when the token was issued, so a purge can revoke what came before it; tokens from before iat existed count from exp − ttl.
const claimsSchema = z.object({ t: z.string().min(1), u: z.string().min(1), exp: z.number().int().positive(), jti: z.string().min(16), iat: z.number().int().positive().optional() });
export type PageTokenClaims = z.infer<typeof claimsSchema>;

export type PageTokenCheck = { ok: true; claims: PageTokenClaims } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

/** Signs and checks page tokens: `<kind prefix>.<base64url JSON claims>.<base64url HMAC>`. */
export class PageTokens {
  constructor(
    private readonly key: Buffer,
    private readonly ttl: { sessionTtlSeconds: number; codeTtlSeconds: number },
  ) {}

  issue(kind: PageTokenKind, subject: { tenantId: string; userId: string }, now: Date): { token: string; claims: PageTokenClaims; expiresAt: Date } {
    const seconds = kind === 'code' ? this.ttl.codeTtlSeconds : this.ttl.sessionTtlSeconds;
    const claims: PageTokenClaims = { t: subject.tenantId, u: subject.userId, exp: Math.floor(now.getTime() / 1000) + seconds, jti: randomBytes(16).toString('base64url'), iat: now.getTime() };
    const head = `${PREFIX[kind]}.${Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url')}`;
    return { token: `${head}.${this.mac(head)}`, claims, expiresAt: new Date(claims.exp * 1000) };
  }

  check(kind: PageTokenKind, token: string, now: Date): PageTokenCheck {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== PREFIX[kind] || token.length > 2048) return { ok: false, reason: 'malformed' };
    const head = `${parts[0]}.${parts[1]}`;
    const given = Buffer.from(parts[2]!, 'base64url');
    const expected = Buffer.from(this.mac(head), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };
    let claims: PageTokenClaims;
    try {
      claims = claimsSchema.parse(JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')));
    } catch {
      // Signed by us but unreadable: only a bug or an old format can get here.
      return { ok: false, reason: 'malformed' };
    }
    if (claims.exp * 1000 <= now.getTime()) return { ok: false, reason: 'expired' };
    return { ok: true, claims };
  }

  /** When a checked token was issued (ms). */
  issuedAt(kind: PageTokenKind, claims: PageTokenClaims): number {
    return claims.iat ?? claims.exp * 1000 - (kind === 'code' ? this.ttl.codeTtlSeconds : this.ttl.sessionTtlSeconds) * 1000;
  }

  private mac(head: string): string {
    return createHmac('sha256', this.key).update(head, 'utf8').digest('base64url');
  }
}

export type PageSessionDeps = Pick<ApiDeps, 'secrets' | 'tenants' | 'pageTokens' | 'config' | 'subjects' | 'purgeAudit'>;

export function pageTokens(deps: Pick<ApiDeps, 'secrets' | 'config'>): PageTokens {
  return new PageTokens(deps.secrets.key('page-token'), deps.config.page);
}

/** Whether the matched route accepts a page session (route config, never the URL text). */
export function acceptsPageSession(request: FastifyRequest): boolean {
  return request.routeOptions.config?.pageSession === true && typeof (request.params as { userId?: unknown } | undefined)?.userId === 'string';
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

const unauthorized = (message: string, reason: string) => new MemoryServiceError(ErrorCode.unauthorized, message, { reason });

/**
 * The auth hook's second way in, for requests without an API key: a page session cookie on a
 * route that accepts one, for the route's own `:userId`. Returns undefined when the route takes no
 * page session or no cookie came (the caller then asks for a key); throws 401 for a bad, expired
 * or signed-out session and 403 for another user's route. Sets `request.pageSession`.
 */
export async function authenticatePageSession(request: FastifyRequest, deps: PageSessionDeps): Promise<{ tenantId: string; userId: string } | undefined> {
  if (!acceptsPageSession(request)) return undefined;
  const token = readCookie(request.headers.cookie, PAGE_SESSION_COOKIE);
  if (!token) return undefined;
  const check = pageTokens(deps).check('session', token, new Date());
  if (!check.ok) {
    if (check.reason === 'expired') throw unauthorized('the page session has expired: open a new link', 'expired');
    throw unauthorized('invalid page session', 'invalid');
  }
  const { t: tenantId, u: userId, jti, exp } = check.claims;
  // A tenant removed from API_KEYS loses its page sessions with its keys.
  if (!deps.tenants.some((t) => t.tenantId === tenantId)) throw unauthorized('invalid page session', 'invalid');
  const routeUser = (request.params as { userId: string }).userId;
  if (routeUser !== userId) throw new MemoryServiceError(ErrorCode.forbidden, 'this page session is for another user', { userId: routeUser });
  const tokens = pageTokens(deps);
  const [signedOut, purged] = await Promise.all([isSignedOut(deps, jti), purgedSince(deps, { tenantId, userId, issuedAtMs: tokens.issuedAt('session', check.claims) })]);
  if (signedOut) throw unauthorized('signed out: open a new link', 'signed_out');
  // The user was erased after this session began: what it opened is gone, and so is the session.
  if (purged) throw unauthorized('this page session ended when the user was erased', 'purged');
  if (!SAFE_METHODS.has(request.method)) refuseCrossSite(request, { marker: true });
  request.pageSession = { tenantId, userId, id: jti, expiresAt: new Date(exp * 1000) };
  return { tenantId, userId };
}

/** The header the page's own script sends on every call that changes something. */
export const PAGE_REQUEST_HEADER = 'x-memory-page';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function first(value: string | string[] | undefined): string | undefined {
  return (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
}

/**
 * CSRF defence of the page's state-changing calls, in depth beyond SameSite=Strict (which an
 * older browser, a same-site subdomain or a future cookie bug would not enforce):
 *  - `X-Memory-Page: 1` (`marker`): a form on another site cannot send a custom header, and a
 *    script there can only with a CORS preflight this service never answers;
 *  - `Sec-Fetch-Site`, when the browser sends it, must be `same-origin`;
 *  - `Origin`, when sent, must be this service's own (the Host it was reached at, or the
 *    X-Forwarded-Host a proxy in front of it names).
 * Each refusal is 403 `forbidden` with `details.reason: "cross_site"`. API-key calls are not
 * browser calls and never come here.
 */
export function refuseCrossSite(request: FastifyRequest, opts: { marker: boolean }): void {
  const refuse = (why: string) => new MemoryServiceError(ErrorCode.forbidden, `refused as a cross-site request: ${why}`, { reason: 'cross_site' });
  if (opts.marker && request.headers[PAGE_REQUEST_HEADER] !== '1') throw refuse(`the page sends "${PAGE_REQUEST_HEADER}: 1"`);
  const site = first(request.headers['sec-fetch-site']);
  if (site !== undefined && site !== 'same-origin') throw refuse(`Sec-Fetch-Site is "${site.slice(0, 20)}"`);
  const origin = first(request.headers.origin);
  if (origin !== undefined) {
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    const own = [request.headers.host, first(request.headers['x-forwarded-host'])].filter((h): h is string => h !== undefined).map((h) => h.toLowerCase());
    if (host === undefined || !own.includes(host)) throw refuse('Origin is another site');
  }
}

/** Over https (directly, or as a TLS-terminating proxy says) the cookie is Secure. Trusting the header can only add the flag. */
function isHttps(request: FastifyRequest): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return request.protocol === 'https' || first === 'https';
}

/** The session cookie's Path: the one user's API paths, written as the page writes them. */
export function sessionCookiePath(userId: string): string {
  return `/v1/users/${encodeURIComponent(userId)}`;
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, userId: string, token: string, maxAgeSeconds: number): void {
  const attrs = [`Path=${sessionCookiePath(userId)}`, `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`, 'HttpOnly', 'SameSite=Strict'];
  if (isHttps(request)) attrs.push('Secure');
  reply.header('set-cookie', `${PAGE_SESSION_COOKIE}=${token}; ${attrs.join('; ')}`);
}

/** The page's HTML, script and style: nothing inline, nothing from elsewhere, never in a frame. */
export const PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': PAGE_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** The same for the JSON the page reads, which is never to be rendered, framed or cached. */
export const PAGE_API_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** What every answer of the API carries: JSON (or an error) that is never to be rendered, framed or sniffed. */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/**
 * Security headers on every answer — errors, 404s and routes that write the response themselves
 * (/mcp) included — and `no-store` on the routes the page calls, whichever credential the request
 * carries. Must be installed before any route: Fastify gives a hook only to the routes registered
 * after it (it was installed after the reminder and settings routes, which then went without).
 * Set on the raw response, so a route's own value (the page's CSP) still wins when it sends.
 */
export function installPageSessionHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) reply.raw.setHeader(name, value);
    if (request.routeOptions.config?.pageSession === true) reply.headers(PAGE_API_HEADERS);
  });
}
