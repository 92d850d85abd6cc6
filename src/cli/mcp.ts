import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { MemoryClient } from '../client/index';
import { ConfigError } from '../config/index';
import { loadMcpStdioConfig } from '../config/mcp-stdio';
import { httpBackend } from '../mcp/backend';
import { createMemoryMcpServer } from '../mcp/tools';

/**
 * The memory tools over stdio, for MCP clients that start their servers as processes
 * (`npm run --silent mcp`; docs/integrate.md). A client of the HTTP API: the key in MEMORY_API_KEY
 * decides the tenant, MEMORY_USER_ID the user, exactly as on /mcp. stdout carries the protocol
 * only; anything else goes to stderr.
 */
async function main(): Promise<void> {
  const config = loadMcpStdioConfig();
  const client = new MemoryClient({ baseUrl: config.apiUrl, apiKey: config.apiKey, timeoutMs: config.timeoutMs });
  const server = createMemoryMcpServer(httpBackend(client, config.userId));
  const transport = new StdioServerTransport();
  transport.onclose = () => process.exit(0);
  await server.connect(transport);
  process.stderr.write(`jarvis-memory MCP (stdio) for user ${config.userId} at ${config.apiUrl}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
});
