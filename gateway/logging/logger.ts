import pino, { type Logger, type DestinationStream } from 'pino';
import { redactValue, REDACTED } from './redaction';

export type { Logger } from 'pino';

/** Bytes of lines buffered within one event-loop turn past which they are written at once (below sonic-boom's 16 KiB write size). */
export const COALESCE_BYTES = 8192;

/**
 * stdout as the process logger writes it: the lines of one event-loop turn in one write, not one
 * write per line. A write is a system call, about 100 µs of CPU on these machines, and every
 * request writes its access-log line: one write per line was about 12 % of an authorization
 * decision's CPU (bench, `--profile A`). The first line of a turn schedules a flush at the end of
 * the turn (`setImmediate`); the lines the turn writes after it join the buffer, which sonic-boom
 * writes on its own once it holds {@link COALESCE_BYTES}. So a line is written within the turn
 * it was logged in, and an idle gateway's lines appear as before.
 *
 * What a hard kill (SIGKILL, the OOM killer) loses: the lines of the turn it interrupts that were
 * not written yet, at most {@link COALESCE_BYTES} (one line per request a turn finished, with their
 * other lines). An exit through main flushes (`log.flush`), and pino flushes synchronously on
 * `exit` (its `onExit` hook for a non-sync destination), as with the unbuffered stream before.
 */
export function coalescedStdout(): DestinationStream {
  const boom = pino.destination({ dest: 1, sync: false, minLength: COALESCE_BYTES });
  const write = boom.write.bind(boom);
  let scheduled = false;
  const endOfTurn = () => {
    scheduled = false;
    try {
      boom.flush();
    } catch {
      // Destroyed: the process is ending, and its exit hook wrote what was left.
    }
  };
  boom.write = (data: string): boolean => {
    const accepted = write(data);
    if (!scheduled) {
      scheduled = true;
      setImmediate(endOfTurn);
    }
    return accepted;
  };
  return boom;
}

/**
 * Builds the process logger: pino JSON, every object scrubbed by the declared redaction list,
 * message strings scrubbed of JWT- and PAN-looking text. Writes asynchronously to stdout, a turn's
 * lines at a time ({@link coalescedStdout}), unless a destination is given (tests pass one to
 * capture lines).
 */
export function createLogger(options: { level: string; destination?: DestinationStream; base?: Record<string, unknown> }): Logger {
  const destination = options.destination ?? coalescedStdout();
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
