import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { MEMORY_TYPES, memoryTypeLabels } from '../../core/memory-types';
import { PAGE_API_HEADERS } from '../page-session';

/** The path the memory page reads its type names from. */
export const PAGE_VOCABULARY_PATH = '/app/memory-types.json';

/**
 * The memory page's names of the memory types, from the one definition (src/core/memory-types.ts),
 * so the page keeps no copy of the list. Public like the page itself: it holds no user data.
 */
export const pageVocabularyRoutes: FastifyPluginAsyncZod = async (app) => {
  const body = { types: MEMORY_TYPES, labels: memoryTypeLabels() };
  app.get(PAGE_VOCABULARY_PATH, { schema: { hide: true }, config: { public: true } }, async (_request, reply) => reply.headers(PAGE_API_HEADERS).header('cache-control', 'no-cache').send(body));
};
