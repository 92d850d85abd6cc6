import { z } from 'zod';
import { ConfigError } from './index';

const schema = z.object({
  MEMORY_API_URL: z.string().trim().url().default('http://127.0.0.1:8080'),
  MEMORY_API_KEY: z.string().trim().min(1, 'the API key of your tenant (one of API_KEYS)'),
  MEMORY_USER_ID: z.string().trim().min(1, 'the user whose memory the tools reach'),
  MEMORY_TIMEOUT_MS: z.coerce.number().int().positive().max(300_000).default(30_000),
});

export interface McpStdioConfig {
  apiUrl: string;
  apiKey: string;
  userId: string;
  timeoutMs: number;
}

/**
 * The stdio MCP server's settings (`npm run --silent mcp`), from the environment its MCP client
 * starts it with: which API, whose key, which user. It is a client of the API, so it needs none of
 * the server's variables.
 */
export function loadMcpStdioConfig(source: NodeJS.ProcessEnv = process.env): McpStdioConfig {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => ({ variable: String(i.path[0] ?? 'environment'), message: i.message })));
  const e = parsed.data;
  return { apiUrl: e.MEMORY_API_URL.replace(/(?<!\/)\/+$/, ''), apiKey: e.MEMORY_API_KEY, userId: e.MEMORY_USER_ID, timeoutMs: e.MEMORY_TIMEOUT_MS };
}
