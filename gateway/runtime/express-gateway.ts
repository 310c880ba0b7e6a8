import fs from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import { installExpressGatewayLogBridge, pluginLoadErrors } from '../logging/express-gateway-bridge';
import { checkConfigDir, checkGatewayConfig, ConfigRefusedError, type GuardContext } from '../boot/config-guards';
import { JWT_POLICY } from '../../policies';
import type { PolicySchema } from '../../policies/policy';
import type { Settings } from '../settings';

/**
 * express-gateway builds `req.egContext` from `new EgContextBase()` on every request, and its
 * constructor draws a uuid62 (crypto random bytes and a deprecated `Buffer()` call, about 5% of the
 * CPU of a proxied request). We put a lighter class in its place before express-gateway loads:
 * `requestID` is our request id, read only when asked for. The vm-based `match`/`run` helpers are
 * left out on purpose: they serve the `expression` condition, which the boot guard refuses.
 */
function installLightContext(): void {
  const modulePath = require.resolve('express-gateway/lib/gateway/context');
  if (require.cache[modulePath]) return;
  class EgContextBase {
    req?: { requestId?: string; user?: unknown };
    get egContext(): this {
      return this;
    }
    get consumer(): unknown {
      return this.req?.user;
    }
    get requestID(): string | undefined {
      return this.req?.requestId;
    }
  }
  const mod = new Module(modulePath);
  mod.filename = modulePath;
  mod.loaded = true;
  mod.exports = EgContextBase;
  require.cache[modulePath] = mod;
}

/**
 * express-gateway's plugin loader requires `lib/services` (users, apps, credentials, tokens and
 * their Redis store, with ioredis-mock and a Lua VM in emulation mode) only to hand it to a
 * plugin's init context. Its services serve the stock admin API and the built-in auth policies,
 * which never run here (the boot guard refuses both), and our plugin does not read them: an empty
 * module takes its place, saving about 0.3 s of CPU at every start.
 */
function installNoServices(): void {
  const modulePath = require.resolve('express-gateway/lib/services');
  if (require.cache[modulePath]) return;
  const mod = new Module(modulePath);
  mod.filename = modulePath;
  mod.loaded = true;
  mod.exports = Object.freeze({});
  require.cache[modulePath] = mod;
}

/**
 * Puts in the require cache, in place of `request` as express-gateway resolves it, a stand-in that
 * loads the real module at its first use (any property read or call) and then steps aside: the real
 * module takes its cache entry, so a later `require` gets it directly. For modules express-gateway
 * loads at start and uses only on paths this gateway rarely or never takes.
 */
function installLoadedOnFirstUse(request: string): void {
  const modulePath = require.resolve(request, { paths: [path.dirname(require.resolve('express-gateway/package.json'))] });
  if (require.cache[modulePath]) return;
  let real: any;
  const load = (): any => {
    if (real === undefined) {
      delete require.cache[modulePath];
      real = require(modulePath);
    }
    return real;
  };
  const standIn = new Proxy(() => undefined, {
    get: (_target, key) => Reflect.get(load(), key),
    has: (_target, key) => Reflect.has(load(), key),
    apply: (_target, self, args) => Reflect.apply(load(), self, args),
  });
  const mod = new Module(modulePath);
  mod.filename = modulePath;
  mod.loaded = true;
  mod.exports = standIn;
  require.cache[modulePath] = mod;
}

/** The compiled output root (dist/), which system.config.yml names as PARTNER_GATEWAY_DIST. */
export const DIST_ROOT = path.resolve(__dirname, '..', '..');

/** express-gateway's configuration object (its `lib/config` singleton). */
export type ExpressGatewayConfig = typeof import('express-gateway/lib/config');

/** A loaded, checked configuration, ready for its pipelines to be built. */
export interface CheckedRuntime {
  config: ExpressGatewayConfig;
  guardContext: GuardContext;
}

function builtinPolicyNames(): Set<string> {
  const dir = path.dirname(require.resolve('express-gateway/lib/policies'));
  return new Set(fs.readdirSync(dir).filter((entry) => fs.statSync(path.join(dir, entry)).isDirectory()));
}

/**
 * Loads express-gateway's configuration and plugins from `settings.configDir` and runs every boot
 * guard, the policy audit included (it also needs `settings.adminHost`).
 * Throws ConfigRefusedError, listing every problem, when the gateway must not start.
 *
 * express-gateway is used as a library: its config loader, plugin loader, policy registry,
 * condition engine and pipeline builder. Its HTTP servers and stock admin API are not started.
 */
export function loadAndCheck(settings: Pick<Settings, 'configDir' | 'adminHost'>): CheckedRuntime {
  const { configDir } = settings;
  // Must precede the first require of express-gateway: its winston loggers go through pino.
  installExpressGatewayLogBridge();
  installLightContext();
  installNoServices();
  // superagent (with formidable, form-data...) serves only remote $refs of the json-schema
  // condition; chokidar only express-gateway's config watcher, which stays off; esprima only
  // js-yaml's !!js/function tag. About 70 ms of CPU at every start, a refused one included.
  installLoadedOnFirstUse('superagent');
  installLoadedOnFirstUse('chokidar');
  installLoadedOnFirstUse('esprima');

  const dirProblems = checkConfigDir(configDir);
  if (dirProblems.length > 0) throw new ConfigRefusedError(dirProblems);

  process.env.EG_CONFIG_DIR = configDir;
  // Hot reload by express-gateway's watcher drops invalid configs silently: it stays off.
  process.env.EG_DISABLE_CONFIG_WATCH = 'true';
  process.env.PARTNER_GATEWAY_DIST = DIST_ROOT;

  let config: ExpressGatewayConfig;
  try {
    config = require('express-gateway/lib/config');
  } catch (err) {
    throw new ConfigRefusedError([{ where: configDir, message: `express-gateway could not load the configuration: ${(err as Error).message}` }]);
  }

  const plugins = (require('express-gateway/lib/plugins') as typeof import('express-gateway/lib/plugins')).load({ config });
  const policyRegistry = require('express-gateway/lib/policies') as typeof import('express-gateway/lib/policies');

  const pluginPolicies = new Map<string, PolicySchema>();
  for (const policy of plugins.policies) {
    pluginPolicies.set(policy.name, policy.schema as PolicySchema);
    policyRegistry.register(policy);
  }
  // express-gateway's condition registry (its json-schema condition loads express) is set up when
  // the guards first need a condition name, else once they passed: a configuration naming no
  // condition is refused without loading it (about 60 ms of CPU). The pipelines need it set up.
  let conditions: Set<string> | undefined;
  const conditionNames = (): Set<string> => {
    if (!conditions) {
      const conditionRegistry = require('express-gateway/lib/conditions') as typeof import('express-gateway/lib/conditions');
      const conditionEngine = conditionRegistry.init();
      for (const condition of plugins.conditions) conditionEngine.register(condition);
      conditions = new Set(Object.keys(conditionRegistry.conditions));
    }
    return conditions;
  };

  const guardContext: GuardContext = {
    pluginPolicies,
    builtinPolicies: builtinPolicyNames(),
    get conditions() {
      return conditionNames();
    },
    pluginLoadErrors: [...pluginLoadErrors],
    jwtPolicy: JWT_POLICY,
    adminHost: settings.adminHost,
    // The admin API never listens without a token: ADMIN_TOKEN, or one generated into DATA_DIR/admin-token.
    adminTokenConfigured: true,
  };
  const problems = checkGatewayConfig(config.gatewayConfig, config.systemConfig, guardContext);
  if (problems.length > 0) throw new ConfigRefusedError(problems);
  conditionNames();
  return { config, guardContext };
}
