import fs from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import type { Request, RequestHandler } from 'express';
import { installExpressGatewayLogBridge, pluginLoadErrors } from './log-bridge';
import { parseGatewayYaml } from './gateway-yaml';
import { checkInitialConfig, type CheckedConfig } from './config-candidate';
import type { GatewayRuntime } from './gateway-runtime';
import type { GatewayConfig } from './gateway-config';
import { compiledDispatch, type CompiledPipeline, type Step } from './compiled-dispatch';
import { mountPathToRegexp } from './mount-paths';
import { pipelineEngineOf, type PipelineEngine } from './pipeline-engine';
import { checkConfigDir, ConfigRefusedError, type GuardContext } from '../boot/config-guards';
import { routeModelOf, type Condition } from '../route-model';
import { JWT_POLICY, POLICIES } from '../../policies';
import type { PolicyContext, PolicyDefinition, PolicySchema } from '../../policies/policy';
import type { Settings } from '../settings';

export type { GatewayRuntime } from './gateway-runtime';
export type { PipelineEngine } from './pipeline-engine';

/** The runtime, and the boot's gateway.config.yml: read once, parsed, schema-checked and guarded. */
export interface LoadedGateway {
  /** The runtime whose pipelines the engine chosen at load runs (`PIPELINE_ENGINE`, default compiled). */
  runtime: GatewayRuntime;
  initial: CheckedConfig;
  /** The same runtime building its pipelines with the given engine (the comparison of the two engines). */
  runtimeFor(engine: PipelineEngine): GatewayRuntime;
}

// Every use of express-gateway's internals is in this file (and its log bridge, ./log-bridge.ts):
// its module swaps in the require cache, private modules, EG_* variables, its AJV and js-yaml, and
// `req.egContext`. The rest of the gateway sees the GatewayRuntime interface below.

/** Puts `exports` in Node's require cache as the module at `modulePath` (before anything requires it). */
function installModule(modulePath: string, exports: unknown): void {
  const mod = new Module(modulePath);
  mod.filename = modulePath;
  mod.loaded = true;
  mod.exports = exports;
  require.cache[modulePath] = mod;
}

/**
 * express-gateway builds `req.egContext` from `new EgContextBase()` on every request, and its
 * constructor draws a uuid62 (crypto random bytes and a deprecated `Buffer()` call, about 5% of the
 * CPU of a proxied request). We put a lighter class in its place before express-gateway loads:
 * `requestID` is our request id, read only when asked for. The vm-based `match`/`run` helpers are
 * left out on purpose: they serve the `expression` condition, which the boot guard refuses.
 *
 * It is also where the rest of the gateway learns which apiEndpoint a pipeline runs for: the
 * pipeline handler sets the context's `req`, then its `apiEndpoint`, on every request; the name
 * goes on the request as the typed `req.apiEndpointName` (metrics, rate limits), so that nothing
 * outside this folder reads `req.egContext`.
 */
function installLightContext(): void {
  const modulePath = require.resolve('express-gateway/lib/gateway/context');
  if (require.cache[modulePath]) return;
  class EgContextBase {
    req?: Request & { user?: unknown };
    private route?: { apiEndpointName?: unknown };
    get egContext(): this {
      return this;
    }
    get consumer(): unknown {
      return this.req?.user;
    }
    get requestID(): string | undefined {
      return this.req?.requestId;
    }
    get apiEndpoint(): { apiEndpointName?: unknown } | undefined {
      return this.route;
    }
    set apiEndpoint(route: { apiEndpointName?: unknown } | undefined) {
      this.route = route;
      const name = route?.apiEndpointName;
      if (this.req) this.req.apiEndpointName = typeof name === 'string' ? name : undefined;
    }
  }
  installModule(modulePath, EgContextBase);
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
  installModule(modulePath, Object.freeze({}));
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
  let real: object | undefined;
  const load = (): object => {
    if (real === undefined) {
      delete require.cache[modulePath];
      real = require(modulePath) as object;
    }
    return real;
  };
  const standIn = new Proxy(() => undefined, {
    get: (_target, key) => Reflect.get(load(), key),
    has: (_target, key) => Reflect.has(load(), key),
    apply: (_target, self, args) => Reflect.apply(load() as (...args: unknown[]) => unknown, self, args),
  });
  installModule(modulePath, standIn);
}

/** Where express-gateway's AJV 6 requires uri-js from. */
export function ajv6UriJsPath(): string {
  const ajv6 = require.resolve('ajv', { paths: [path.dirname(require.resolve('express-gateway/package.json'))] });
  return require.resolve('uri-js', { paths: [path.dirname(ajv6)] });
}

/** fast-uri as the gateway's AJV 8 depends on it (no dependency of its own). */
export function fastUriPath(): string {
  return require.resolve('fast-uri', { paths: [path.dirname(require.resolve('ajv'))] });
}

/**
 * express-gateway's AJV 6 resolves every schema `$id` and `$ref` it registers and compiles with
 * uri-js (`parse`, `serialize`, `resolve`), about 50 ms of CPU at every start, a refused one
 * included. fast-uri, the drop-in replacement AJV 8 moved to (the gateway's own AJV loads it
 * anyway), takes uri-js's place in the require cache: the same functions, giving the same results
 * on every `$id` and `$ref` of the schemas AJV 6 holds
 * (test/unit/gateway/runtime/ajv6-uri.test.ts). AJV 6 never sees a schema from the YAML: the
 * json-schema condition, whose schemas it would compile, is refused by the boot guard.
 */
function installFastUriForAjv6(): void {
  const modulePath = ajv6UriJsPath();
  if (require.cache[modulePath]) return;
  installModule(modulePath, require(fastUriPath()) as unknown);
}

/**
 * The key under which {@link GatewayRuntime.buildPipelines} puts the policy context in the config
 * object it hands express-gateway's pipeline builder, which passes that object, as it is, to every
 * policy factory as its second argument. A symbol: it cannot meet a field of express-gateway's.
 */
const POLICY_CONTEXT = Symbol('partner-gateway policy context');

type PipelineConfig = { [POLICY_CONTEXT]?: PolicyContext };

/**
 * A policy of our plugin as express-gateway's registry calls it, `(actionParams, config)`: called
 * with the context its build put in the config, never with express-gateway's config itself.
 */
function calledWithContext(definition: { name: string; policy: PolicyDefinition['policy'] }): (params: Record<string, unknown>, config: PipelineConfig | undefined) => RequestHandler {
  const factory = definition.policy;
  return (params, config) => {
    const context = config?.[POLICY_CONTEXT];
    if (!context) throw new Error(`policy ${definition.name}: built without the gateway's services (only GatewayRuntime.buildPipelines builds pipelines)`);
    return factory(params, context);
  };
}

/** The compiled output root (dist/), which system.config.yml names as PARTNER_GATEWAY_DIST. */
export const DIST_ROOT = path.resolve(__dirname, '..', '..');

/** The `$id` under which express-gateway registers its gateway.config schema (lib/config/schemas). */
export const GATEWAY_CONFIG_SCHEMA_ID = 'http://express-gateway.io/models/gateway.config.json';

function builtinPolicyNames(): Set<string> {
  const dir = path.dirname(require.resolve('express-gateway/lib/policies'));
  return new Set(fs.readdirSync(dir).filter((entry) => fs.statSync(path.join(dir, entry)).isDirectory()));
}

/**
 * Loads express-gateway (models, system.config.yml, plugins, policy and condition registries) from
 * `settings.configDir`, then reads gateway.config.yml once and checks it with every boot guard, the
 * policy audit included (it also needs `settings.adminHost`): the same code that checks each hot
 * reload's candidate. Throws ConfigRefusedError, listing every problem, when the gateway must not start.
 *
 * express-gateway's own loader never reads gateway.config.yml: its config singleton is put in the
 * require cache holding the configuration checked here, so nothing loads the file a second time.
 * Its HTTP servers and stock admin API are not started.
 */
export function loadAndCheck(settings: Pick<Settings, 'configDir' | 'adminHost'> & Partial<Pick<Settings, 'pipelineEngine'>>, options: { engine?: PipelineEngine } = {}): LoadedGateway {
  const { configDir } = settings;
  let engine: PipelineEngine;
  try {
    engine = options.engine ?? pipelineEngineOf(settings.pipelineEngine);
  } catch (err) {
    throw new ConfigRefusedError('load', [{ where: 'PIPELINE_ENGINE', message: (err as Error).message }]);
  }
  // Must precede the first require of express-gateway: its winston loggers go through pino.
  installExpressGatewayLogBridge();
  installLightContext();
  installNoServices();
  installFastUriForAjv6();
  // superagent (with formidable, form-data...) serves only remote $refs of the json-schema
  // condition; chokidar only express-gateway's config watcher, which stays off; esprima only
  // js-yaml's !!js/function tag. About 70 ms of CPU at every start, a refused one included.
  installLoadedOnFirstUse('superagent');
  installLoadedOnFirstUse('chokidar');
  installLoadedOnFirstUse('esprima');

  const dirProblems = checkConfigDir(configDir);
  if (dirProblems.length > 0) throw new ConfigRefusedError('load', dirProblems);

  process.env.EG_CONFIG_DIR = configDir;
  // Hot reload by express-gateway's watcher drops invalid configs silently: it stays off.
  process.env.EG_DISABLE_CONFIG_WATCH = 'true';
  process.env.PARTNER_GATEWAY_DIST = DIST_ROOT;

  const Config = require('express-gateway/lib/config/config') as typeof import('express-gateway/lib/config/config');
  const config = new Config();
  try {
    config.loadModels();
    config.loadConfig('system');
  } catch (err) {
    throw new ConfigRefusedError('load', [{ where: configDir, message: `express-gateway could not load the configuration: ${(err as Error).message}` }]);
  }

  const plugins = (require('express-gateway/lib/plugins') as typeof import('express-gateway/lib/plugins')).load({ config });
  const policyRegistry = require('express-gateway/lib/policies') as typeof import('express-gateway/lib/policies');

  const pluginPolicies = new Map<string, PolicySchema>();
  // Our plugin registers copies of POLICIES: its factories are known by identity.
  const ours = new Set<unknown>(POLICIES.map((p) => p.policy));
  for (const policy of plugins.policies) {
    pluginPolicies.set(policy.name, policy.schema as PolicySchema);
    policyRegistry.register(ours.has(policy.policy) ? { ...policy, policy: calledWithContext(policy) } : policy);
  }
  // express-gateway's condition registry (its json-schema condition loads express) is set up when
  // the guards first need a condition name, else when pipelines are first built: a configuration
  // naming no condition is refused without loading it (about 60 ms of CPU).
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
    pathToRegexp: mountPathToRegexp,
  };

  const schemas = require('express-gateway/lib/schemas') as typeof import('express-gateway/lib/schemas');
  const pipelineConfigOf = (gatewayConfig: GatewayConfig, file: string, services: Parameters<GatewayRuntime['buildPipelines']>[2]) => ({
    gatewayConfig,
    systemConfig: config.systemConfig,
    models: config.models,
    gatewayConfigPath: file,
    systemConfigPath: config.systemConfigPath,
    [POLICY_CONTEXT]: { services, gatewayConfig } satisfies PolicyContext,
  });
  const builders: Record<PipelineEngine, GatewayRuntime['buildPipelines']> = {
    async 'express-gateway'(gatewayConfig, file, services) {
      conditionNames();
      const { Router } = require('express') as typeof import('express');
      const pipelines = require('express-gateway/lib/gateway/pipelines') as typeof import('express-gateway/lib/gateway/pipelines');
      const router = await pipelines.bootstrap({ app: Router(), config: pipelineConfigOf(gatewayConfig, file, services) });
      // express-gateway mounts each policy's middlewares in a `.then` it does not return: its
      // bootstrap resolves before the routers are complete. Serve nothing until those have run.
      await new Promise<void>((resolve) => setImmediate(resolve));
      return router;
    },
    async compiled(gatewayConfig, file, services) {
      conditionNames();
      return compilePipelines(gatewayConfig, pipelineConfigOf(gatewayConfig, file, services), policyRegistry);
    },
  };
  const runtimeFor = (chosen: PipelineEngine): GatewayRuntime => ({
    guardContext,
    systemConfig: config.systemConfig,
    parseYaml: parseGatewayYaml,
    schemaError(gatewayConfig) {
      try {
        const result = schemas.validate(GATEWAY_CONFIG_SCHEMA_ID, gatewayConfig);
        return result.isValid ? undefined : result.error;
      } catch (err) {
        return (err as Error).message;
      }
    },
    buildPipelines: builders[chosen],
  });
  const runtime = runtimeFor(engine);

  const initial = checkInitialConfig(runtime, path.join(configDir, 'gateway.config.yml'));
  config.gatewayConfig = initial.gatewayConfig;
  config.gatewayConfigPath = initial.source.path;
  installModule(require.resolve('express-gateway/lib/config'), config);
  return { runtime, initial, runtimeFor };
}

/** A condition of the route model as express-gateway's condition registry takes it (the YAML's map). */
function conditionConfigOf(condition: Condition): Record<string, unknown> {
  return { name: condition.name, ...condition.params };
}

/**
 * The compiled engine's build (compiled-dispatch.ts): each pipeline of the configuration's route
 * model made into a flat array of steps, with express-gateway's own pieces and in its order: the
 * policy whitelist checked per pipeline (`POLICY_NOT_DECLARED`), each action's condition made by
 * its condition registry (before the policy's factory), the action's params copied with its
 * `ActionParams` helpers and handed to the registered policy (its AJV 6 check and defaults, then
 * our factory with the policy context), a condition's own middlewares (json-schema's body parsers)
 * before its step. A condition is checked at its own step, on the request as the steps before it
 * left it. No Express `Router`, no `egContext`, except for a pipeline naming a condition whose
 * middlewares read it.
 */
async function compilePipelines(gatewayConfig: GatewayConfig, pipelineConfig: PipelineConfig, policyRegistry: typeof import('express-gateway/lib/policies')): Promise<RequestHandler> {
  const model = routeModelOf(gatewayConfig);
  const compiled = new Map<string, CompiledPipeline>();
  // express-gateway builds nothing for a configuration without pipelines or apiEndpoints.
  const builds = Boolean(gatewayConfig.pipelines ?? gatewayConfig.pipeline) && Boolean(gatewayConfig.apiEndpoints ?? gatewayConfig.apiEndpoint);
  if (builds) {
    const { conditions } = require('express-gateway/lib/conditions') as { conditions: Record<string, (config: unknown) => ((req: Request) => boolean) | Promise<(req: Request) => boolean>> };
    const predefined = require('express-gateway/lib/conditions/predefined') as { name: string; middlewares?: Step[] }[];
    const ActionParams = require('express-gateway/lib/gateway/actionParams') as { prototype: object };
    for (const pipeline of model.pipelines.values()) {
      for (const step of pipeline.steps) {
        if (!model.policies.includes(step.policy)) throw new Error('POLICY_NOT_DECLARED');
      }
      const pending: (Step[] | Promise<Step[]>)[] = [];
      let needsContext = false;
      for (const step of pipeline.steps) {
        const policy = policyRegistry.resolve(step.policy).policy as (params: object, config: unknown) => RequestHandler;
        for (const action of step.actions) {
          const conditionConfig = action.condition ? conditionConfigOf(action.condition) : undefined;
          let condition: ((req: Request) => boolean) | Promise<(req: Request) => boolean> | undefined;
          let middlewares: Step[] = [];
          if (conditionConfig) {
            condition = conditions[String(conditionConfig.name)]!(conditionConfig);
            middlewares = predefined.find((definition) => definition.name === conditionConfig.name)?.middlewares ?? [];
            if (middlewares.length > 0) needsContext = true;
          }
          const middleware = policy(Object.assign({}, action.params, ActionParams.prototype), pipelineConfig) as Step;
          const guarded = (check: ((req: Request) => boolean) | undefined): Step[] => [
            ...middlewares,
            check === undefined ? middleware : (req, res, next) => (check(req) ? middleware(req, res, next) : next()),
          ];
          pending.push(condition instanceof Promise ? condition.then(guarded) : guarded(condition));
        }
      }
      const steps = (await Promise.all(pending)).flat();
      compiled.set(pipeline.name, needsContext ? { steps, enter: enterContext } : { steps });
    }
  }
  return compiledDispatch(builds ? model : { ...model, routes: [] }, compiled);
}

/** express-gateway's request context, for the pipelines whose conditions' middlewares read it. */
function enterContext(req: Request, res: unknown, endpoint: { name: string }): void {
  const EgContextBase = require('express-gateway/lib/gateway/context') as new () => object;
  const context = Object.create(new EgContextBase()) as { req: Request; res: unknown; apiEndpoint: unknown };
  context.req = req;
  context.res = res;
  context.apiEndpoint = { apiEndpointName: endpoint.name };
  (req as Request & { egContext?: unknown }).egContext = context;
}
