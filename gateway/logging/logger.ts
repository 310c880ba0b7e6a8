import pino, { type Logger, type DestinationStream } from 'pino';
import { redactValue, REDACTED } from './redaction';

export type { Logger } from 'pino';

/**
 * Builds the process logger: pino JSON, every object scrubbed by the declared redaction list,
 * message strings scrubbed of JWT- and PAN-looking text. Writes asynchronously to stdout unless a
 * destination is given (tests pass one to capture lines).
 */
export function createLogger(options: { level: string; destination?: DestinationStream; base?: Record<string, unknown> }): Logger {
  const destination = options.destination ?? pino.destination({ dest: 1, sync: false, minLength: 0 });
  return pino(
    {
      level: options.level,
      base: options.base ?? { service: 'partner-gateway' },
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      // pino's own path redaction for the common header locations; the deep scrubber below
      // catches every other place a listed key can appear.
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'req.headers.cookie'], censor: REDACTED },
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => redactValue(object) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          // Scrub the message arguments too (format strings from express-gateway, error texts).
          const scrubbed = args.map((arg) => (typeof arg === 'string' ? (redactValue(arg) as string) : arg));
          return method.apply(this, scrubbed as Parameters<typeof method>);
        },
      },
    },
    destination
  );
}

let rootLogger: Logger | undefined;

/** The process-wide logger; `initLogger` replaces it once at start. */
export function logger(): Logger {
  rootLogger ??= createLogger({ level: process.env.LOG_LEVEL || 'info' });
  return rootLogger;
}

/** Sets the process-wide logger (called once by main, or by a test capturing output). */
export function initLogger(instance: Logger): Logger {
  rootLogger = instance;
  return instance;
}
