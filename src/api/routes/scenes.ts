import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SCENE_IDS } from '../../core/persona/scenes';
import { listScenes, sceneMemories, SCENE_PAGE_MAX } from '../../persona/scenes';
import { userKeyOf } from '../auth';
import type { ApiDeps } from '../deps';
import { memoryView, userIdSchema, userParams } from '../schemas';
import { memoryToView } from '../views';

const sceneView = z.object({
  id: z.enum(SCENE_IDS),
  label: z.string(),
  memoryCount: z.number().int(),
  hints: z.array(z.string()).describe('Words of the lexicon its memories use most'),
});

/**
 * Scene navigation (L2) drill-down: the user's scenes as the navigation block lists them, and one
 * scene's memories (the block names scene ids; an agent follows one with memory_scene or here).
 */
export const sceneRoutes =
  (deps: ApiDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/v1/users/:userId/scenes',
      {
        schema: {
          summary: "The user's scenes (life areas: work, health, family…) with their memory counts, largest first; empty before the first rebuild",
          params: userParams,
          response: { 200: z.object({ scenes: z.array(sceneView), language: z.enum(['zh', 'en']).optional(), builtAt: z.string().optional() }) },
        },
      },
      async (request) => {
        const listed = await listScenes(deps, { userId: userKeyOf(request) });
        return { scenes: listed.scenes, ...(listed.language ? { language: listed.language } : {}), ...(listed.builtAt ? { builtAt: listed.builtAt.toISOString() } : {}) };
      },
    );

    app.get(
      '/v1/users/:userId/scenes/:sceneId/memories',
      {
        schema: {
          summary: "One scene's active memories, most important first. 404 not_found for an id that is not one of the user's scenes",
          params: z.object({ userId: userIdSchema, sceneId: z.string().min(1).max(40) }),
          querystring: z.object({ limit: z.coerce.number().int().min(1).max(SCENE_PAGE_MAX).default(50) }),
          response: { 200: z.object({ scene: sceneView, memories: z.array(memoryView), total: z.number().int() }) },
        },
      },
      async (request) => {
        const found = await sceneMemories(deps, { userId: userKeyOf(request), sceneId: request.params.sceneId, limit: request.query.limit });
        return { scene: found.scene, memories: found.memories.map(memoryToView), total: found.total };
      },
    );
  };
