import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiDeps } from '../deps';

const check = z.object({ status: z.enum(['ok', 'down']), latencyMs: z.number(), error: z.string().optional() });

async function probe(fn: () => Promise<unknown>, timeoutMs = 3000): Promise<z.infer<typeof check>> {
  const t0 = performance.now();
  try {
    await Promise.race([fn(), new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs))]);
    return { status: 'ok', latencyMs: Math.round(performance.now() - t0) };
  } catch (err) {
    return { status: 'down', latencyMs: Math.round(performance.now() - t0), error: err instanceof Error ? err.message : String(err) };
  }
}

export const healthRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/healthz',
      {
        // Load balancers probe it without a key; it names dependencies and latencies, no user data.
        config: { public: true },
        schema: {
          summary: 'Status and latency of each dependency (no authentication)',
          response: { 200: z.object({ status: z.enum(['ok', 'degraded']), checks: z.record(z.string(), check) }), 503: z.object({ status: z.enum(['ok', 'degraded']), checks: z.record(z.string(), check) }) },
        },
      },
      async (_request, reply) => {
        const entries = await Promise.all([
          ['temporal', probe(() => deps.temporal.connection.workflowService.getSystemInfo({}))] as const,
          ['postgres', probe(() => deps.pool.query('SELECT 1'))] as const,
          ['chroma', probe(() => deps.vectors.heartbeat())] as const,
          ...Object.entries(deps.probes).map(([name, fn]) => [name, probe(fn)] as const),
        ].map(async ([name, p]) => [name, await p] as const));
        const checks = Object.fromEntries(entries);
        const ok = Object.values(checks).every((c) => c.status === 'ok');
        return reply.status(ok ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', checks });
      },
    );
  };
