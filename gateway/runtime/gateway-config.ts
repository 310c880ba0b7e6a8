/**
 * gateway.config.yml as express-gateway's gateway.config schema accepts it, parsed (`${VAR}`
 * substituted): the type the runtime reads the raw configuration with. The typed reading of its
 * routes and steps is the route model (gateway/route-model); what is typed here is what the runtime
 * hands on or copies as written (the pipeline builders, the sandbox-only pipelines left out, the
 * params a step takes from the catalog).
 *
 * Fields express-gateway accepts in several shapes (a string or a list, one action or a list) are
 * typed with each shape; a field the runtime never reads is `unknown`.
 */

/** One or a list of. */
export type OneOrMany<T> = T | readonly T[];

/** A condition: its name and its own fields (`paths` of pathExact, `conditions` of allOf...). */
export type ConditionYaml = { name?: string; [field: string]: unknown };

/** One action of a policy step: its params and an optional condition. */
export type ActionYaml = { action?: Record<string, unknown> | null; condition?: ConditionYaml | null };

/** One entry of a pipeline's `policies`: `{ <policy>: [actions] }` (one key). */
export type PolicyStepYaml = Record<string, OneOrMany<ActionYaml> | null>;

/** A pipeline: the apiEndpoints it serves (`apiEndpoints`, or its alias `apiEndpoint`) and its steps (`policies`, or `policy`). */
export type PipelineYaml = {
  apiEndpoints?: OneOrMany<string>;
  apiEndpoint?: OneOrMany<string>;
  policies?: OneOrMany<PolicyStepYaml>;
  policy?: OneOrMany<PolicyStepYaml>;
};

/** One entry of an apiEndpoint. */
export type ApiEndpointYaml = {
  host?: string;
  hostRegex?: string;
  paths?: OneOrMany<string>;
  path?: OneOrMany<string>;
  pathRegex?: string;
  methods?: OneOrMany<string>;
  scopes?: unknown;
};

/** A parsed gateway.config.yml that express-gateway's schema accepted. */
export type GatewayConfig = {
  http?: unknown;
  https?: unknown;
  /** express-gateway's stock admin API (refused by the policy audit). */
  admin?: unknown;
  apiEndpoints?: Record<string, OneOrMany<ApiEndpointYaml>>;
  serviceEndpoints?: Record<string, unknown>;
  /** The whitelist of policies pipelines may use. */
  policies?: readonly string[];
  pipelines?: Record<string, PipelineYaml>;
  [section: string]: unknown;
};

/** system.config.yml as loaded at start: the plugins it declares (the rest is express-gateway's own). */
export type SystemConfig = {
  plugins?: Record<string, unknown>;
  [section: string]: unknown;
};
