import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { userKeyOf } from '../api/auth';
import type { ApiDeps } from '../api/deps';
import { mcpRegistersUser } from './budgets';
import { serviceBackend } from './service-backend';
import { MEMORY_USER_HEADER } from './tools-names';
import { createMemoryMcpServer } from './tools';

/**
 * Route config of /mcp: a key, and the user in X-Memory-User (src/api/auth.ts) — or a user key
 * (`jmu_…`, what an MCP client's config should hold), which names its user itself and may leave
 * the header out; only memory_add registers the user.
 */
const MCP_ROUTE = { userFromHeader: MEMORY_USER_HEADER, registersUser: mcpRegistersUser };

/**
 * MCP over Streamable HTTP at /mcp, stateless: every POST gets its own server, bound to the user
 * the auth hook resolved (the key's tenant, the X-Memory-User header), and its own transport, so
 * no request can reach another's user and no session state lives in the API. JSON responses, no
 * server-initiated stream: the tools answer at once. Rate limits are counted per tool call before
 * the handler runs (src/api/rate-limits.ts).
 */
export const mcpRoutes =
  (deps: ApiDeps, hooks: { afterRecall?: (userKey: string, memoryIds: string[], at: Date) => void } = {}): FastifyPluginAsync =>
  async (app) => {
    app.post('/mcp', { config: MCP_ROUTE, schema: { hide: true } }, async (request, reply) => {
      const server = createMemoryMcpServer(serviceBackend(deps, userKeyOf(request), hooks));
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
