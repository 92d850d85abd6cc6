import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { ErrorCode, MemoryServiceError } from '../core/errors';
import type { AfterRecall } from '../recall/recall';
import type { Logger } from 'pino';
import { fastifyLogging, logPseudonym, requestLogSerializers, type LogSettings } from '../logging';
import { installAuth } from './auth';
import { installPageSessionHeaders } from './page-session';
import type { ApiDeps } from './deps';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './errors';
import { DEFAULT_BODY_LIMIT, installRateLimits } from './rate-limits';
import { registerProactive, userActivation } from './proactive';
import { MAX_ID_LENGTH } from './schemas';
import { codecRoutes } from './routes/codec';
import { conversationSearchRoutes } from './routes/conversation-search';
import { conversationRoutes } from './routes/conversations';
import { healthRoutes } from './routes/health';
import { metricsRoutes } from './routes/metrics';
import { memoryRoutes } from './routes/memories';
import { lifecycleRoutes } from './routes/lifecycle';
import { sceneRoutes } from './routes/scenes';
import { privacyRoutes } from './routes/privacy';
import { recallRoutes } from './routes/recall';
import { userRoutes } from './routes/users';
import { userKeyRoutes } from './routes/user-keys';
import { mcpRoutes } from '../mcp/http';
import { proxyRoutes } from '../proxy/route';
import { installHttpTracing } from '../observability/http-tracing';

export interface ApiOptions {
  logLevel?: string;
  /** The process's logger (src/logging.ts) and its format; without one, Fastify's own JSON logger at `logLevel`. */
  logger?: Logger;
  logFormat?: LogSettings['format'];
  maxMessageChars: number;
  maxMessagesPerConversation: number;
  /** Called after a recall injected memories (reinforcement happens off the hot path). */
  afterRecall?: AfterRecall;
  /** OTEL_TRACES is on: each request gets its server span (src/observability/http-tracing.ts). */
  traces?: boolean;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Builds the HTTP API (not listening yet): auth, JSON errors, OpenAPI at /openapi.json. */
export async function buildApi(deps: ApiDeps, options: ApiOptions): Promise<FastifyInstance> {
  const pseudonym = logPseudonym(deps.secrets.key('log-pseudonym'));
  const app = Fastify({
    ...(options.logger ? fastifyLogging(options.logger, options.logFormat ?? 'json', pseudonym) : { logger: { level: options.logLevel ?? 'info', serializers: requestLogSerializers(pseudonym) } }),
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Ids a little over their limit reach the schema and its clear 400; far longer ones stop at the router.
    routerOptions: { maxParamLength: 2 * MAX_ID_LENGTH },
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();
  // First of all hooks: a hook reaches only the routes registered after it.
  installPageSessionHeaders(app);
  // The request's span, parent of all the request does (off by default: no hook then).
  if (options.traces) installHttpTracing(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // Invalid UTF-8 must be refused, not silently turned into U+FFFD and stored.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body: Buffer, done) => {
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      done(new MemoryServiceError(ErrorCode.validationFailed, 'request body is not valid UTF-8'), undefined);
      return;
    }
    if (text.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new MemoryServiceError(ErrorCode.malformedJson, 'request body is not valid JSON'), undefined);
    }
  });

  await app.register(swagger, {
    openapi: {
      info: { title: 'jarvis-memory', version: '0.1.0', description: 'Long-term memory service of a personal AI assistant' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  installErrorHandling(app);
  // Before auth's preHandler and the routes: per-route body limits, and budgets spent before any query.
  // The counters in PostgreSQL, so every API process spends one budget.
  const limits = await installRateLimits(app, deps.config, { db: deps.rateLimitDb });
  installAuth(app, deps, { beforeNewUser: limits.admitNewUser });
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger());

  await app.register(healthRoutes(deps));
  await app.register(metricsRoutes(deps));
  await app.register(userRoutes);
  await app.register(userKeyRoutes(deps));
  await app.register(memoryRoutes(deps));
  await app.register(lifecycleRoutes(deps));
  await app.register(recallRoutes(deps, { afterRecall: options.afterRecall }));
  const onUserActive = userActivation(deps);
  await app.register(conversationRoutes(deps, { ...options, onUserActive: deps.config.proactive.schedulesOnFirstMessage ? onUserActive : undefined }));
  await registerProactive(app, deps, onUserActive);
  await app.register(conversationSearchRoutes(deps));
  await app.register(sceneRoutes(deps));
  // Integration entry points (docs/integrate.md): MCP tools at /mcp…
  await app.register(mcpRoutes(deps, { afterRecall: options.afterRecall }));
  // …and the OpenAI-compatible memory proxy at /proxy/v1/chat/completions.
  await app.register(
    proxyRoutes(deps, { ...options, onUserActive: deps.config.proactive.schedulesOnFirstMessage ? onUserActive : undefined }),
  );
  // Temporal payload codec server for operators (Temporal UI, CLI): outside /v1, its own auth.
  if (deps.codecServer) await app.register(codecRoutes(deps.codecServer));
  await app.register(
    privacyRoutes(deps, {
      onPurged: (userKey) => {
        onUserActive.forget(userKey);
      },
    }),
  );
  return app;
}
