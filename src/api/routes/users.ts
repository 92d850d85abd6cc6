import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { userKeyOf } from '../auth';
import { userParams } from '../schemas';

/**
 * GET /v1/users/{userId}: the tenant and the user key this API key reaches for that id. The key
 * is what Temporal UI shows (`MemoryUserId`), so an auditor with the tenant's key can find a
 * user's workflows without the user id ever being stored in Temporal.
 */
export const userRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/v1/users/:userId',
    {
      schema: {
        summary: "The tenant and the pseudonymous user key (Temporal's MemoryUserId) of this user",
        params: userParams,
        response: { 200: z.object({ userId: z.string(), tenantId: z.string(), userKey: z.string(), temporalQuery: z.string() }) },
      },
    },
    async (request) => {
      const userKey = userKeyOf(request);
      return { userId: request.params.userId, tenantId: request.tenantId!, userKey, temporalQuery: `MemoryUserId = '${userKey}'` };
    },
  );
};
