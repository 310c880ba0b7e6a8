import { ConfigRefusedError } from './boot/config-guards';
import { createLogger, initLogger } from './logging/logger';
import { readSettings } from './settings';
import { startGateway } from './start';

/**
 * Process entry point (`npm start`). Exits 1 with a clear message when the configuration is
 * refused or a dependency cannot start; SIGTERM/SIGINT finish in-flight requests, then exit 0.
 */
async function main(): Promise<void> {
  let settings;
  try {
    settings = readSettings();
  } catch (err) {
    process.stderr.write(`partner-gateway: ${(err as Error).message}\n`);
    process.exit(1);
  }
  const log = initLogger(createLogger({ level: settings.logLevel }));
  try {
    const gateway = await startGateway(settings, log);
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      gateway.close().then(
        () => log.flush(() => process.exit(0)),
        () => process.exit(1)
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  } catch (err) {
    const message = err instanceof ConfigRefusedError ? err.message : `failed to start: ${(err as Error).message}`;
    log.fatal({ err }, message);
    // Also on stderr, so an operator sees why even with LOG_LEVEL=silent.
    process.stderr.write(`partner-gateway: ${message}\n`);
    log.flush(() => process.exit(1));
  }
}

void main();
