import Module from 'node:module';
import util from 'node:util';
import { logger } from '../logging/logger';

/**
 * express-gateway logs through its own winston loggers (`express-gateway/lib/logger`), bypassing
 * our redaction. We put a module in its place in Node's require cache before anything of
 * express-gateway is loaded, so that every one of its log lines goes through pino.
 *
 * It also records errors of the plugin loader: express-gateway only logs a plugin that failed to
 * load and carries on, which the boot guard turns into a refusal to start.
 */

type Level = 'error' | 'warn' | 'info' | 'verbose' | 'debug' | 'silly';

const pinoLevel: Record<Level, 'error' | 'warn' | 'info' | 'debug' | 'trace'> = {
  error: 'error',
  warn: 'warn',
  info: 'info',
  verbose: 'debug',
  debug: 'debug',
  silly: 'trace',
};

/** Messages express-gateway's plugin loader logged at error level (a failed plugin load). */
export const pluginLoadErrors: string[] = [];

interface BridgedLogger {
  [level: string]: unknown;
  log(level: string, ...args: unknown[]): void;
}

function bridged(label: string): BridgedLogger {
  const out: BridgedLogger = {
    log(level: string, ...args: unknown[]) {
      const target = pinoLevel[level as Level] ?? 'info';
      const message = util.format(...args);
      if (label === 'plugins' && target === 'error') pluginLoadErrors.push(message);
      const log = logger();
      if (log.isLevelEnabled(target)) log[target]({ component: `express-gateway:${label}` }, message);
    },
  };
  for (const level of Object.keys(pinoLevel) as Level[]) {
    out[level] = (...args: unknown[]) => out.log(level, ...args);
  }
  return out;
}

let installed = false;

/**
 * Replaces express-gateway's winston loggers with pino-backed ones. Must run before the first
 * `require('express-gateway/...')`; calling it again is a no-op.
 */
export function installExpressGatewayLogBridge(): void {
  if (installed) return;
  const modulePath = require.resolve('express-gateway/lib/logger');
  if (require.cache[modulePath]) {
    throw new Error('express-gateway/lib/logger was loaded before the log bridge was installed');
  }
  const labels = ['gateway', 'policy', 'config', 'db', 'admin', 'plugins'];
  const exportsObject: Record<string, unknown> = Object.fromEntries(labels.map((l) => [l, bridged(l)]));
  exportsObject.createLoggerWithLabel = (label: string) => bridged(label.replace(/[[\]]/g, ''));
  const mod = new Module(modulePath);
  mod.filename = modulePath;
  mod.loaded = true;
  mod.exports = exportsObject;
  require.cache[modulePath] = mod;
  installed = true;
}
