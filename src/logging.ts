import { createHmac } from 'node:crypto';
import type { Logger as TemporalLogger, LogLevel as TemporalLogLevel, LogMetadata } from '@temporalio/common';
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { AppConfig } from './config';

/**
 * One logger for the process: the HTTP API (Fastify) and the Temporal worker write through it.
 * `json` is pino's own output, one object per line, for a log shipper. `pretty` renders the same
 * records as one readable line each with pino-pretty (pino's own formatter, kept in step with it)
 * and replaces Fastify's two JSON-heavy request records with one line per request.
 */
export interface LogSettings {
  level: AppConfig['logLevel'];
  format: AppConfig['logFormat'];
}

export function createLogger(settings: LogSettings, destination: NodeJS.WritableStream = process.stdout): Logger {
  if (settings.format === 'json') return pino({ level: settings.level }, destination);
  return pino(
    { level: settings.level },
    pretty({
      destination,
      colorize: destination === process.stdout && process.stdout.isTTY === true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,reqId',
      messageFormat: '{if reqId}{reqId} {end}{msg}',
      singleLine: true,
      // Lines reach the terminal before the process exits (dev and CLI, not a hot path).
      sync: true,
    }),
  );
}

/** The stand-in a log line gets for a user id. */
export type LogPseudonym = (userId: string) => string;

/**
 * User ids are often e-mail addresses or phone numbers, and logs are kept and shipped where the
 * database's protections do not reach. Request logs name a user by a keyed pseudonym instead
 * (HMAC under its own purpose of SECRET_KEY, see ServiceSecrets): stable, so one user's requests
 * still line up, and not testable against a guess by anyone reading the logs without the secret.
 */
export function logPseudonym(key: Buffer): LogPseudonym {
  return (userId) => `u_${createHmac('sha256', key).update(userId, 'utf8').digest('base64url').slice(0, 16)}`;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    // Broken percent-encoding: the router refuses such a path; its text is pseudonymised as sent.
    return segment;
  }
}

/**
 * The request target with the segment after every `users` segment (the `:userId` of
 * `/v1/users/{userId}/…`) replaced by its pseudonym. Segments are compared decoded, so `%75sers`
 * or an encoded id are caught like the plain spelling; the query string is left as it is.
 */
export function redactUrl(url: string, pseudonym: LogPseudonym): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const segments = path.split('/');
  for (let i = 0; i < segments.length - 1; i++) {
    if (decodeSegment(segments[i]!).toLowerCase() === 'users' && segments[i + 1] !== '') segments[i + 1] = pseudonym(decodeSegment(segments[i + 1]!));
  }
  return segments.join('/') + (q < 0 ? '' : url.slice(q));
}

/** Fastify's `req` record (method, url, host, remote address) with the user id pseudonymised. */
export function requestLogSerializers(pseudonym: LogPseudonym): { req: (request: FastifyRequest) => Record<string, unknown> } {
  return {
    req: (request) => ({
      method: request.method,
      url: redactUrl(request.url, pseudonym),
      host: request.host,
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort,
    }),
  };
}

/** Fastify in pretty mode: no "incoming request" record, one line when the reply is sent. */
export class ReadableRequestLog extends LogController {
  constructor(private readonly pseudonym: LogPseudonym) {
    super();
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = `${request.method} ${redactUrl(request.url, this.pseudonym)} → ${reply.statusCode} (${reply.elapsedTime.toFixed(1)} ms)`;
    if (error) reply.log.error({ err: error }, line);
    else reply.log.info(line);
  }
}

/** Fastify options for this logger: the instance (request records pseudonymised), and the request log that fits its format. */
export function fastifyLogging(logger: Logger, format: LogSettings['format'], pseudonym: LogPseudonym): { loggerInstance: FastifyBaseLogger; logController?: LogController } {
  const loggerInstance = logger.child({}, { serializers: requestLogSerializers(pseudonym) });
  return format === 'pretty' ? { loggerInstance, logController: new ReadableRequestLog(pseudonym) } : { loggerInstance };
}

const TEMPORAL_TO_PINO = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/** The Temporal SDK's logger interface over a pino logger (worker state, activity failures, core). */
export function temporalLogger(logger: Logger): TemporalLogger {
  const log = (level: TemporalLogLevel, message: string, meta?: LogMetadata) => logger[TEMPORAL_TO_PINO[level]](meta ?? {}, message);
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}

/**
 * For `bundleWorkflowCode`: webpack's whole build report arrives as one INFO record (every module
 * of the bundle, a screenful at each start). It is demoted to debug; "bundle created", warnings
 * and errors (a failed build prints the same report as an error) still show.
 */
export function bundlerLogger(logger: TemporalLogger): TemporalLogger {
  return {
    ...logger,
    log: (level, message, meta) => logger.log(level === 'INFO' && !message.startsWith('Workflow bundle created') ? 'DEBUG' : level, message, meta),
    info: (message, meta) => (message.startsWith('Workflow bundle created') ? logger.info(message, meta) : logger.debug(message, meta)),
  };
}
