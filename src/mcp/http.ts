import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import { registersNoUser, requestUserId, userKeyOf } from '../api/auth';
import type { ApiDeps } from '../api/deps';
import type { AfterRecall } from '../recall/recall';
import { serviceBackend } from './service-backend';
import { MEMORY_USER_HEADER } from './tools-names';
import { createMemoryMcpServer } from './tools';

/** Whether a Host header value is one /mcp answers to: `hostname` entries match any port, `hostname:port` entries exactly. */
export function mcpHostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (!host) return false;
  let url: URL;
  try {
    url = new URL(`http://${host}`);
  } catch {
    return false;
  }
  // Nothing but a host and a port: "evil.example@localhost" or a path would parse into something else.
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || `${url.host}` !== host.toLowerCase().replace(/:80$/, '')) return false;
  return allowed.includes(url.hostname) || allowed.includes(`${url.hostname}:${url.port || '80'}`);
}

/** Whether an Origin header is acceptable: absent (not a browser), or one of the configured origins. */
export function mcpOriginAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  let normalised: string;
  try {
    normalised = new URL(origin).origin;
  } catch {
    // "null" (a sandboxed frame, a file) and garbage: a browser context we cannot name.
    return false;
  }
  return normalised !== 'null' && allowed.includes(normalised);
}

/**
 * DNS rebinding and cross-site calls (the MCP Streamable HTTP transport asks servers to validate
 * Origin): a web page the user visits can make the browser POST to this server — under the
 * attacker's own domain once it re-resolves to 127.0.0.1, or cross-site. Browsers always send
 * Origin on such requests and the Host of the name they resolved, so a request naming another
 * Origin or Host is refused before any tool runs; MCP clients that are not browsers send no Origin.
 */
function guardOriginAndHost(app: FastifyInstance, access: { allowedOrigins: readonly string[]; allowedHosts: readonly string[] }): void {
  app.addHook('onRequest', async (request) => {
    const origin = request.headers.origin;
    if (!mcpOriginAllowed(origin, access.allowedOrigins)) {
      throw new MemoryServiceError(ErrorCode.forbidden, 'this Origin may not call /mcp (MCP_ALLOWED_ORIGINS)', { reason: 'origin_not_allowed', origin: origin?.slice(0, 200) });
    }
    if (!mcpHostAllowed(request.headers.host, access.allowedHosts)) {
      throw new MemoryServiceError(ErrorCode.forbidden, 'this Host is not served at /mcp (MCP_ALLOWED_HOSTS)', { reason: 'host_not_allowed', host: request.headers.host?.slice(0, 200) });
    }
  });
}

/**
 * Route config of /mcp: a key, and the user in X-Memory-User (src/api/auth.ts) — or a user key
 * (`jmu_…`, what an MCP client's config should hold), which names its user itself and may leave
 * the header out. No request registers its user here: memory_add does, per call, after its own
 * refusals and with a take-back when it refuses later (src/mcp/service-backend.ts), since its
 * refusals are answered inside a 200 that the auth hook's take-back would never see.
 */
const MCP_ROUTE = { userFromHeader: MEMORY_USER_HEADER, registersUser: registersNoUser };

/**
 * MCP over Streamable HTTP at /mcp, stateless: every POST gets its own server, bound to the user
 * the auth hook resolved (the key's tenant, the X-Memory-User header), and its own transport, so
 * no request can reach another's user and no session state lives in the API. JSON responses, no
 * server-initiated stream: the tools answer at once. Rate limits are counted per tool call before
 * the handler runs (src/api/rate-limits.ts).
 */
export const mcpRoutes =
  (deps: ApiDeps, hooks: { afterRecall?: AfterRecall } = {}): FastifyPluginAsync =>
  async (app) => {
    // This plugin's routes only (/mcp), after the key check.
    guardOriginAndHost(app, deps.config.mcp);
    app.post('/mcp', { config: MCP_ROUTE, schema: { hide: true } }, async (request, reply) => {
      const user = {
        userKey: userKeyOf(request),
        tenantId: request.tenantId!,
        externalId: requestUserId(request)!,
        admitNewUser: () => app.budgets.admitNewUser(request),
        onTakeBackFailed: (err: unknown) => request.log.warn({ err }, 'a refused first write could not take its user registration back'),
      };
      const server = createMemoryMcpServer(serviceBackend(deps, user, hooks));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // The transport writes the answer itself.
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (err) {
        request.log.error({ err }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null }));
        }
      }
    });

    // Stateless: no stream to open (GET) and no session to end (DELETE). Behind the same auth.
    const notAllowed = async (_request: unknown, reply: FastifyReply) =>
      reply.status(405).header('allow', 'POST').send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless, use POST' }, id: null });
    app.get('/mcp', { config: MCP_ROUTE, schema: { hide: true } }, notAllowed);
    app.delete('/mcp', { config: MCP_ROUTE, schema: { hide: true } }, notAllowed);
  };
