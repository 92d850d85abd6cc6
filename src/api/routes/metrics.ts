import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorCode, MemoryServiceError } from '../../core/errors';
import { gaugeSources } from '../../observability/gauge-sources';
import { registry, setGaugeSources } from '../../observability/metrics';
import type { ApiDeps } from '../deps';
import { isOperator } from './health';

/**
 * Prometheus exposition of the service's series (docs/operations.md#metrics-and-traces). For the
 * operator only: counts and latencies describe the tenants' traffic, so the operator token
 * (CODEC_AUTH_TOKEN) is asked for, as for the detail of /healthz; without a configured token the
 * route refuses every request.
 */
export const metricsRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const operatorToken = deps.codecServer?.authToken;
    setGaugeSources(gaugeSources(deps));
    app.get(
      '/metrics',
      {
        // Not an API-key route: the operator token is checked below.
        config: { public: true },
        schema: { summary: 'Prometheus metrics (operator token: CODEC_AUTH_TOKEN)', response: { 200: z.string() } },
      },
      async (request, reply) => {
        if (!isOperator(request.headers.authorization, operatorToken)) throw new MemoryServiceError(ErrorCode.unauthorized, 'the metrics need the operator token (CODEC_AUTH_TOKEN)');
        const body = await registry.metrics();
        return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(body);
      },
    );
  };
