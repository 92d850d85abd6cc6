import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkDependencies, type DependencyCheck } from '../../shared/health';
import type { ApiDeps } from '../deps';

const check = z.object({
  // degraded: the dependency answers, but something needs an operator (the outbox's dead letters).
  status: z.enum(['ok', 'degraded', 'down']),
  // The rest only with the operator token (see below).
  latencyMs: z.number().optional(),
  error: z.string().optional(),
  // The vector outbox check (docs/reliability.md): entries waiting for Chroma, dead letters, oldest wait.
  pending: z.number().optional(),
  deadLetters: z.number().optional(),
  oldestPendingSeconds: z.number().nullable().optional(),
  // The extraction quarantine check (docs/write-path.md#quarantine): messages held out of extraction.
  quarantined: z.number().optional(),
});
const healthView = z.object({ status: z.enum(['ok', 'degraded']), checks: z.record(z.string(), check) });

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Whether the request carries the operator token (CODEC_AUTH_TOKEN), compared in constant time. */
export function isOperator(header: string | undefined, token: string | undefined): boolean {
  if (!token || !header) return false;
  const m = /^Bearer +(\S+)$/i.exec(header);
  return m !== null && timingSafeEqual(digest(m[1]!), digest(token));
}

export const healthRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const operatorToken = deps.codecServer?.authToken;
    app.get(
      '/healthz',
      {
        // Load balancers probe it without a key: they get each dependency's status and nothing
        // else. A driver's error text names hosts, ports, users and versions — a map for an
        // attacker — so it goes to the log, and to an operator presenting the operator token.
        config: { public: true },
        schema: {
          summary: 'Status of each dependency (no authentication); latencies, counts and errors with the operator token (CODEC_AUTH_TOKEN)',
          response: { 200: healthView, 503: healthView },
        },
      },
      async (request, reply) => {
        const checks = await checkDependencies(deps);
        for (const [dependency, c] of Object.entries(checks)) {
          if (c.error !== undefined) request.log.warn({ dependency, status: c.status, error: c.error, latencyMs: c.latencyMs }, 'health check failed');
        }
        // A dependency down fails the probe (503); dead letters only degrade it: the service still
        // answers, and a load balancer must not take it out of rotation for them.
        const down = Object.values(checks).some((c) => c.status === 'down');
        const ok = Object.values(checks).every((c) => c.status === 'ok');
        const shown: Record<string, DependencyCheck | { status: DependencyCheck['status'] }> = isOperator(request.headers.authorization, operatorToken)
          ? checks
          : Object.fromEntries(Object.entries(checks).map(([name, c]) => [name, { status: c.status }]));
        return reply.status(down ? 503 : 200).header('cache-control', 'no-store').send({ status: ok ? 'ok' : 'degraded', checks: shown });
      },
    );
  };
