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

/** Fastify in pretty mode: no "incoming request" record, one line when the reply is sent. */
export class ReadableRequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = `${request.method} ${request.url} → ${reply.statusCode} (${reply.elapsedTime.toFixed(1)} ms)`;
    if (error) reply.log.error({ err: error }, line);
    else reply.log.info(line);
  }
}

/** Fastify options for this logger: the instance, and the request log that fits its format. */
export function fastifyLogging(logger: Logger, format: LogSettings['format']): { loggerInstance: FastifyBaseLogger; logController?: LogController } {
  return format === 'pretty' ? { loggerInstance: logger, logController: new ReadableRequestLog() } : { loggerInstance: logger };
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
