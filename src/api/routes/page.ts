import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';

const WEB_DIR = fileURLToPath(new URL('../../../web/', import.meta.url));

const FILES: Record<string, { file: string; type: string }> = {
  '/app': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

/**
 * The memory page: plain HTML, CSS and one script, read once at start and served without auth
 * (they hold no data, so they are public routes; the page asks for the API key and sends it as a
 * Bearer header).
 */
export const pageRoutes: FastifyPluginAsync = async (app) => {
  for (const [path, { file, type }] of Object.entries(FILES)) {
    const body = readFileSync(`${WEB_DIR}${file}`);
    app.get(path, { schema: { hide: true }, config: { public: true } }, async (_request, reply) =>
      reply.header('content-type', type).header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(body),
    );
  }
  app.get('/app/', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => reply.redirect('/app'));
};
