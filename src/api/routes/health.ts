import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkDependencies } from '../../services/health';
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
  // The extraction quarantine check (docs/write-path.md#quarantine): messages held out of extraction.
  quarantined: z.number().optional(),
});

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
        const checks = await checkDependencies(deps);
        // A dependency down fails the probe (503); dead letters only degrade it: the service still
        // answers, and a load balancer must not take it out of rotation for them.
        const down = Object.values(checks).some((c) => c.status === 'down');
        const ok = Object.values(checks).every((c) => c.status === 'ok');
        return reply.status(down ? 503 : 200).send({ status: ok ? 'ok' : 'degraded', checks });
      },
    );
  };
