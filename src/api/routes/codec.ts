import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorCode, MemoryServiceError } from '../../core/errors';

/**
 * Temporal's remote codec protocol, for Temporal UI and the `temporal` CLI (docs/security.md):
 * POST /codec/decode and /codec/encode take and return `{payloads: [{metadata: {k: base64},
 * data: base64}]}` (Payloads as proto3 JSON). Operators only — the codec turns ciphertext of every
 * user back into their text:
 *   - `Authorization: Bearer <CODEC_AUTH_TOKEN>` (CLI: `--codec-auth 'Bearer …'`, or a proxy in front of the UI);
 *   - or a session cookie from /codec/login, which Temporal UI sends when its codec setting
 *     "include cross-origin credentials" is on (the UI itself can only send an OIDC access token
 *     of its own login, never a static header).
 * CORS admits the Temporal UI origins (CODEC_CORS_ORIGINS), with credentials.
 */

const SESSION_COOKIE = 'jarvis_codec';
const SESSION_SECONDS = 8 * 3600;

const jsonPayload = z.object({
  metadata: z.record(z.string(), z.string()).nullish(),
  data: z.string().nullish(),
});
const payloadsBody = z.object({ payloads: z.array(jsonPayload).max(10_000) });
type JsonPayload = z.infer<typeof jsonPayload>;

const BASE64 = /^[A-Z0-9+/]*={0,2}$/i;

function fromJson(p: JsonPayload): Payload {
  const bytes = (s: string) => {
    if (!BASE64.test(s)) throw new MemoryServiceError(ErrorCode.validationFailed, 'payload fields must be base64');
    return new Uint8Array(Buffer.from(s, 'base64'));
  };
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, bytes(v)])),
    data: p.data ? bytes(p.data) : new Uint8Array(0),
  };
}

function toJson(p: Payload): { metadata: Record<string, string>; data: string } {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array(0)).toString('base64')])),
    data: Buffer.from(p.data ?? new Uint8Array(0)).toString('base64'),
  };
}

function sameSecret(a: string, b: string): boolean {
  const A = Buffer.from(a);
  const B = Buffer.from(b);
  return A.length === B.length && timingSafeEqual(A, B);
}

/** Session cookies are MACed with a key derived from the token: a new token ends every session. */
class Sessions {
  private readonly key: Buffer;
  constructor(token: string) {
    this.key = createHmac('sha256', token).update('jarvis-memory/codec-session').digest();
  }
  issue(nowSeconds: number): string {
    const body = `v1.${nowSeconds + SESSION_SECONDS}`;
    return `${body}.${createHmac('sha256', this.key).update(body).digest('base64url')}`;
  }
  valid(value: string, nowSeconds: number): boolean {
    const m = /^(v1\.(\d{1,12}))\.([\w-]{43})$/.exec(value);
    if (!m || Number(m[2]) < nowSeconds) return false;
    return sameSecret(m[3]!, createHmac('sha256', this.key).update(m[1]!).digest('base64url'));
  }
}

function cookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

const LOGIN_PAGE = `<!doctype html><meta charset="utf-8"><title>jarvis-memory codec</title>
<style>body{font:15px system-ui;max-width:36em;margin:4em auto;padding:0 1em}input{font:inherit;padding:.3em;width:100%;box-sizing:border-box}</style>
<h1>Decode Temporal payloads</h1>
<p>Operators only: the codec decrypts every user's workflow data. Enter CODEC_AUTH_TOKEN to let this browser's Temporal UI decode for ${SESSION_SECONDS / 3600} hours.
In Temporal UI, open the codec server settings and turn on <em>include cross-origin credentials</em>.</p>
<form method="post" action="login"><p><input type="password" name="token" autocomplete="off" autofocus placeholder="CODEC_AUTH_TOKEN"></p><p><button>Sign in</button></p></form>`;

const page = (reply: FastifyReply, status: number, html: string) =>
  reply.status(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').header('x-frame-options', 'DENY').send(html);

export const codecRoutes =
  (deps: { codec: PayloadCodec; authToken?: string; corsOrigins: string[] }): FastifyPluginAsyncZod =>
  async (app) => {
    const sessions = deps.authToken ? new Sessions(deps.authToken) : undefined;
    const nowSeconds = () => Math.floor(Date.now() / 1000);

    // The login form posts urlencoded; only this plugin accepts that.
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body: string, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body)));
    });

    app.addHook('onRequest', async (request, reply) => {
      const origin = request.headers.origin;
      if (origin && deps.corsOrigins.includes(origin)) {
        reply.header('access-control-allow-origin', origin).header('access-control-allow-credentials', 'true');
      }
      reply.header('vary', 'Origin');
    });

    const authorize = (request: FastifyRequest) => {
      if (!deps.authToken || !sessions) throw new MemoryServiceError(ErrorCode.forbidden, 'the codec server is disabled: set CODEC_AUTH_TOKEN');
      const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
      if (bearer !== undefined ? sameSecret(bearer, deps.authToken) : sessions.valid(cookie(request, SESSION_COOKIE) ?? '', nowSeconds())) return;
      throw new MemoryServiceError(ErrorCode.unauthorized, 'the codec server needs the operator token ("Authorization: Bearer <CODEC_AUTH_TOKEN>") or a session from /codec/login');
    };

    for (const op of ['encode', 'decode'] as const) {
      // CORS preflight of Temporal UI (it sends content-type and X-Namespace); no credentials on a preflight.
      app.options(`/codec/${op}`, { schema: { hide: true }, config: { public: true } }, async (_request, reply) =>
        reply
          .status(204)
          .header('access-control-allow-methods', 'POST, OPTIONS')
          .header('access-control-allow-headers', 'authorization, content-type, x-namespace')
          .header('access-control-max-age', '600')
          .send(),
      );
      app.post(
        `/codec/${op}`,
        {
          // Not an API-key route: the operator token or the /codec/login session is checked below.
          config: { public: true },
          schema: {
            summary: `Temporal remote codec: ${op} payloads (operator token or /codec/login session)`,
            body: payloadsBody,
            response: { 200: z.object({ payloads: z.array(z.object({ metadata: z.record(z.string(), z.string()), data: z.string() })) }) },
          },
        },
        async (request) => {
          authorize(request);
          const payloads = request.body.payloads.map(fromJson);
          let out: Payload[];
          try {
            out = op === 'decode' ? await deps.codec.decode(payloads) : await deps.codec.encode(payloads);
          } catch (err) {
            // Per the protocol a codec failure is a 400; the message says why (e.g. "data key destroyed").
            throw new MemoryServiceError(ErrorCode.validationFailed, `cannot ${op}: ${err instanceof Error ? err.message : String(err)}`, {}, { cause: err });
          }
          return { payloads: out.map(toJson) };
        },
      );
    }

    app.get('/codec/login', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => page(reply, 200, LOGIN_PAGE));

    app.post('/codec/login', { schema: { hide: true }, config: { public: true } }, async (request, reply) => {
      const token = (request.body as { token?: unknown } | undefined)?.token;
      if (!deps.authToken || !sessions) return page(reply, 403, '<!doctype html><p>The codec server is disabled: set CODEC_AUTH_TOKEN.</p>');
      if (typeof token !== 'string' || !sameSecret(token, deps.authToken)) return page(reply, 401, `${LOGIN_PAGE}<p><strong>Wrong token.</strong></p>`);
      const secure = request.protocol === 'https' ? '; Secure' : '';
      reply.header('set-cookie', `${SESSION_COOKIE}=${sessions.issue(nowSeconds())}; Path=/codec; Max-Age=${SESSION_SECONDS}; HttpOnly; SameSite=Strict${secure}`);
      return page(reply, 200, `<!doctype html><meta charset="utf-8"><p>Signed in for ${SESSION_SECONDS / 3600} hours. Temporal UI in this browser can now decode payloads (with "include cross-origin credentials" on in its codec settings).</p>`);
    });

    app.post('/codec/logout', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => {
      reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/codec; Max-Age=0; HttpOnly; SameSite=Strict`);
      return reply.status(204).send();
    });
  };
