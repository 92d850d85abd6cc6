import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { outboxHealth, type OutboxHealth } from '../../services/outbox-drain';
import type { ApiDeps } from '../deps';

const check = z.object({
  // degraded: the dependency answers, but something needs an operator (the outbox's dead letters).
  status: z.enum(['ok', 'degraded', 'down']),
  latencyMs: z.number(),
  error: z.string().optional(),
  // The vector outbox check (docs/reliability.md): entries waiting for Chroma, dead letters, oldest wait.
  pending: z.number().optional(),
  deadLetters: z.number().optional(),
  oldestPendingSeconds: z.number().nullable().optional(),
});

async function probe(fn: () => Promise<unknown>, timeoutMs = 3000): Promise<z.infer<typeof check>> {
  const t0 = performance.now();
  try {
    await Promise.race([fn(), new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs))]);
    return { status: 'ok', latencyMs: Math.round(performance.now() - t0) };
  } catch (err) {
    return { status: 'down', latencyMs: Math.round(performance.now() - t0), error: err instanceof Error ? err.message : String(err) };
  }
}

/** The vector outbox: degraded while dead letters exist (they need an operator, see docs/reliability.md). */
async function outboxCheck(deps: ApiDeps): Promise<z.infer<typeof check>> {
  let health: OutboxHealth | undefined;
  const probed = await probe(async () => {
    health = await outboxHealth(deps);
  });
  if (!health) return probed;
  return { ...probed, status: health.deadLetters > 0 ? 'degraded' : 'ok', ...health };
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
          ['outbox', outboxCheck(deps)] as const,
          ['temporal', probe(() => deps.temporal.connection.workflowService.getSystemInfo({}))] as const,
          ['postgres', probe(() => deps.pool.query('SELECT 1'))] as const,
          ['chroma', probe(() => deps.vectors.heartbeat())] as const,
          ...Object.entries(deps.probes).map(([name, fn]) => [name, probe(fn)] as const),
        ].map(async ([name, p]) => [name, await p] as const));
        const checks = Object.fromEntries(entries);
        // A dependency down fails the probe (503); dead letters only degrade it: the service still
        // answers, and a load balancer must not take it out of rotation for them.
        const down = Object.values(checks).some((c) => c.status === 'down');
        const ok = Object.values(checks).every((c) => c.status === 'ok');
        return reply.status(down ? 503 : 200).send({ status: ok ? 'ok' : 'degraded', checks });
      },
    );
  };
