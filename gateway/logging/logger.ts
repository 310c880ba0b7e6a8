import fs from 'node:fs';
import pino, { type Logger, type DestinationStream } from 'pino';
import { redactValue, REDACTED } from './redaction';

export type { Logger } from 'pino';

/** Bytes of lines held within one event-loop turn past which they are handed on at once (below sonic-boom's 16 KiB write size). */
export const COALESCE_BYTES = 8192;

/**
 * stdout as the process logger writes it: the lines of one event-loop turn in one write, not one
 * write per line. A write is a system call, about 100 µs of CPU on these machines, and every
 * request writes its access-log line: one write per line costs about 12 % of an authorization
 * decision's CPU (bench, `--profile A`). The first line of a turn schedules the hand-over at the
 * end of the turn (`setImmediate`); the turn's later lines join it, and {@link COALESCE_BYTES} of
 * them are handed over at once. The stream behind is pino's asynchronous sonic-boom:
 * it writes what it is given at once, or right after a write in flight.
 *
 * What a hard kill (SIGKILL, the OOM killer) loses: the lines of the turn it interrupts that were
 * not handed over yet, at most {@link COALESCE_BYTES}, besides what sonic-boom had not written. An exit through main flushes (`log.flush`); `flushSync`, and the `exit` hook (registered
 * before the destination, so it runs before pino's own), write sonic-boom's buffer and then the
 * held lines synchronously. As with sonic-boom alone, a write already in flight at exit is
 * finished by Node's thread pool and may land after them.
 */
export function coalescedStdout(): DestinationStream & { flush(cb?: (err?: Error) => void): void; flushSync(): void } {
  let held = '';
  let scheduled = false;
  let boom: ReturnType<typeof pino.destination> | undefined;
  const handOver = () => {
    scheduled = false;
    if (held === '' || !boom) return;
    const chunk = held;
    held = '';
    boom.write(chunk);
  };
  const flushSync = () => {
    scheduled = false;
    try {
      boom?.flushSync();
    } catch {
      // Not open yet, or closed: the held lines are still written below.
    }
    if (held === '') return;
    const chunk = held;
    held = '';
    fs.writeSync(1, chunk);
  };
  process.on('exit', flushSync);
  boom = pino.destination({ dest: 1, sync: false, minLength: 0 });
  const destination = boom;
  return {
    write(line: string): boolean {
      held += line;
      if (held.length >= COALESCE_BYTES) handOver();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(handOver);
      }
      return true;
    },
    flush(cb?: (err?: Error) => void): void {
      handOver();
      destination.flush(cb);
    },
    flushSync,
  };
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

/** Writes one templated line at `level`; `fields` are already serialised and scrubbed by the caller. */
export type TemplatedLineWriter = (level: 'info' | 'error', fields: string) => void;

/**
 * A writer of lines with one fixed message (`msg`), byte for byte what `log.info(fields, msg)` /
 * `log.error(...)` write with this module's logger: `{"level":…,"time":…<bindings>,<fields>,"msg":…}`,
 * the level's label through the logger's own formatter, its own time function and bindings, to its
 * destination. It skips pino's per-line work (the logMethod hook, the formatter's deep copy through
 * {@link redactValue}, path redaction, `JSON.stringify` of the object) and so scrubs nothing:
 * `fields` is a JSON object's members (`"a":1,"b":"x"`, no braces) that the caller built from
 * values it scrubbed itself, each field that can carry a secret (the access-log line,
 * gateway/http/request-context.ts). Nothing is written below the logger's level.
 *
 * @example accessLine('info', `"status":200,"url":${JSON.stringify(redactUrl(url))}`)
 */
export function templatedLines(log: Logger, msg: string): TemplatedLineWriter {
  const internals = log as unknown as Record<symbol, unknown>;
  const formatters = internals[pino.symbols.formattersSym] as { level?: (label: string, value: number) => object } | undefined;
  const levelField = (label: 'info' | 'error'): string => {
    const value = log.levels.values[label]!;
    return JSON.stringify(formatters?.level ? formatters.level(label, value) : { level: value }).slice(1, -1);
  };
  const heads = { info: `{${levelField('info')}`, error: `{${levelField('error')}` };
  const tail = `,"msg":${JSON.stringify(redactValue(msg))}}\n`;
  const time = internals[pino.symbols.timeSym] as () => string;
  const stream = internals[pino.symbols.streamSym] as DestinationStream;
  return (level, fields) => {
    if (!log.isLevelEnabled(level)) return;
    stream.write(`${heads[level]}${time()}${internals[pino.symbols.chindingsSym] as string},${fields}${tail}`);
  };
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
