import type { Logger } from './logging/logger';
import { loadAndCheck } from './runtime/express-gateway';
import type { RunningGateway } from './serve';
import type { Settings } from './settings';

export type { RunningGateway } from './serve';


/**
 * Starts the gateway: checks the configuration (fail closed), opens the database and migrates it,
 * starts the sandbox upstreams that are not configured, builds the pipelines and listens.
 * Throws (and leaves nothing running) when any step fails.
 *
 * gateway.config.yml is read, parsed, schema-checked and guarded once (`loadAndCheck`); serve.ts
 * builds the pipelines of that same checked configuration. The modules only a started gateway
 * needs (database, admin API, HTTP apps, sandboxes) are loaded after the configuration passed the
 * boot guards: a refused configuration exits without paying for them.
 */
export async function startGateway(settings: Settings, log: Logger, options: { announce?: boolean } = {}): Promise<RunningGateway> {
  const loaded = loadAndCheck(settings);
  const { serveCheckedGateway } = await import('./serve');
  return serveCheckedGateway(settings, log, loaded, options);
}
