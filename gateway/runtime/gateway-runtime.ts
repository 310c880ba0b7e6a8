import type { RequestHandler } from 'express';
import type { GuardContext } from '../boot/config-guards';
import type { GatewayServices } from '../../policies';
import type { GatewayConfig, SystemConfig } from './gateway-config';

// The interface through which the rest of the gateway sees express-gateway: what `loadAndCheck`
// (express-gateway.ts) builds, and what config-candidate.ts and config-reloader.ts chain into a
// boot and a hot reload. Types only, in a file of its own: express-gateway.ts imports
// config-candidate.ts (to check the boot's file), so config-candidate.ts cannot import it back.

/**
 * express-gateway as the gateway uses it, loaded once per process by `loadAndCheck` (express-gateway.ts): the
 * parser and schema of gateway.config.yml, the registries the boot guards check a configuration
 * against, and the pipeline builder. A boot and every reload go through the same four steps
 * (config-candidate.ts): parse, check, build the pipelines, swap the partner app's handler.
 */
export interface GatewayRuntime {
  /** What the boot guards check a configuration against (policy and condition registries, plugin errors, `ADMIN_HOST`). */
  guardContext: GuardContext;
  /** system.config.yml as loaded at start (it does not reload). */
  systemConfig: SystemConfig;
  /** YAML with express-gateway's own js-yaml, but its safe schema (no `!!js/function`); throws js-yaml's error. */
  parseYaml(text: string, file: string): unknown;
  /** express-gateway's gateway.config schema (its AJV 6 may fill defaults in, as at boot): the refusal, or undefined. */
  schemaError(gatewayConfig: unknown): string | undefined;
  /**
   * Builds the pipelines of a configuration into one request handler (which engine runs them is
   * the runtime's choice: pipeline-engine.ts), on a config object of the configuration's own
   * (express-gateway's `lib/config` singleton is never handed a candidate). Policy factories run
   * here, each with `services` and the configuration as its {@link PolicyContext}: a boot and every
   * reload pass the gateway's one bundle. The handler calls `next()` for a request no route serves.
   */
  buildPipelines(gatewayConfig: GatewayConfig, file: string, services: GatewayServices): Promise<RequestHandler>;
}
