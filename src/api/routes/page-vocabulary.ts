import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { MEMORY_TYPES, memoryTypeLabels } from '../../core/memory-types';
import { PAGE_API_HEADERS } from '../page-session';

/** The path the memory page reads its words from. */
export const PAGE_VOCABULARY_PATH = '/app/words.json';

const WORDS_FILE = fileURLToPath(new URL('../../../web/words.json', import.meta.url));

/** The page's words by language: its own (web/words.json) and the memory types' names. */
export function pageWords(): { zh: Record<string, string>; en: Record<string, string> } {
  const own = JSON.parse(readFileSync(WORDS_FILE, 'utf8')) as { zh: Record<string, string>; en: Record<string, string> };
  const types = memoryTypeLabels();
  return { zh: { ...own.zh, ...types.zh }, en: { ...own.en, ...types.en } };
}

/**
 * The memory page's words, with the names of the memory types from their one definition
 * (src/core/memory-types.ts), so the page keeps no copy of the list. Read once at start and
 * public like the page itself: it holds no user data.
 */
export const pageVocabularyRoutes: FastifyPluginAsyncZod = async (app) => {
  const body = { types: MEMORY_TYPES, words: pageWords() };
  app.get(PAGE_VOCABULARY_PATH, { schema: { hide: true }, config: { public: true } }, async (_request, reply) => reply.headers(PAGE_API_HEADERS).header('cache-control', 'no-cache').send(body));
};
