import { PARTNER_BASE_PATH, PUBLIC_OPERATIONS } from '../catalog';

/**
 * What the policy audit knows about routes and policies that the YAML alone does not say, beyond
 * the operation catalog (gateway/catalog: which operations are public, read the query string or
 * return card data): the upstreams' contracts, our policy names, express-gateway's built-ins.
 */

export { PARTNER_BASE_PATH };

/**
 * The public routes, by path: the catalog's public operations, each served without a token in
 * exactly one shape (docs/policy-audit.md, "Public routes"). A route is public because of what its
 * pipeline does, never because of its path: on a public path, only GET/HEAD, the route's own
 * operation step and, where `rateLimited`, the public rate limit are allowed (optionally behind
 * es512-jwt); anything else is CRITICAL `public-route-shape`. The health check is not rate limited:
 * the spec says it always answers 200.
 */
export const PUBLIC_ROUTES: ReadonlyMap<string, { operation: string; rateLimited: boolean }> = new Map(
  [...PUBLIC_OPERATIONS].map(([path, { name, rateLimited }]) => [path, { operation: name, rateLimited }])
);

/** The paths of the public routes (PUBLIC_ROUTES). */
export const PUBLIC_ROUTE_PATHS: ReadonlySet<string> = new Set(PUBLIC_ROUTES.keys());

/** The only methods a public route may answer. */
export const PUBLIC_ROUTE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/**
 * The upstream contract (docs/upstreams.md sections 4 to 6, without the sandboxes' test-only
 * `/__sandbox/` routes): every path an upstream serves, `{name}` marking a parameter. The upstream
 * `path` of an operation the pipeline ends in (the catalog's) must be one of its upstream's paths,
 * with a route parameter in each `{}` place and the fixed segments verbatim: a literal card key or
 * account id (or any other segment) is CRITICAL `proxy-path-contract`. A unit test compares this
 * table with the document.
 */
export const UPSTREAM_CONTRACT_PATHS: Readonly<Record<string, readonly string[]>> = {
  accounts: ['/accounts', '/accounts/{accountId}'],
  issuer: [
    '/cards',
    '/cards/{cardKey}',
    '/cards/{cardKey}/status',
    '/cards/{cardKey}/emboss-name',
    '/cards/{cardKey}/replace',
    '/cards/{cardKey}/reissue',
    '/cards/{cardKey}/cvv',
    '/cards/{cardKey}/pan',
    '/cards/{cardKey}/3ds/answer',
    '/cards/{cardKey}/pin/reset-tries',
    '/cards/{cardKey}/pin/change',
    '/cards/{cardKey}/pin/force-lock',
    '/cards/{cardKey}/authorize',
    '/cards/{cardKey}/limits',
    '/cards/{cardKey}/limits/{name}',
    '/cards/{cardKey}/limits/{name}/available',
    '/pin-encryption-key',
  ],
  processing: ['/webhooks/card-created', '/transactions', '/transactions/changes', '/transactions/{id}', '/fees', '/delivery-methods', '/cards/status-update'],
};

/** Our policy names, as the partner-gateway plugin registers them (a unit test compares with POLICIES). */
export const POLICY = {
  jwt: 'es512-jwt',
  ownership: 'ownership',
  validate: 'validate',
  idempotency: 'idempotency',
  operation: 'operation',
  rateLimit: 'rate-limit',
  sensitiveData: 'sensitive-data',
} as const;

/** Every policy the partner-gateway plugin registers. */
export const PLUGIN_POLICY_NAMES: ReadonlySet<string> = new Set(Object.values(POLICY));

/**
 * express-gateway 1.16's built-in policies (its lib/policies folders) and whether one evaluates
 * code from the configuration (a vm-run expression or template string). `rate-limit` is also the
 * name of our own policy, which our plugin registers in its place.
 */
export const BUILTIN_POLICIES: Readonly<Record<string, { runsCode: boolean }>> = {
  'basic-auth': { runsCode: false },
  cors: { runsCode: false },
  expression: { runsCode: true },
  headers: { runsCode: true },
  jwt: { runsCode: false },
  'key-auth': { runsCode: false },
  log: { runsCode: true },
  oauth2: { runsCode: false },
  'oauth2-introspect': { runsCode: false },
  proxy: { runsCode: false },
  'rate-limit': { runsCode: true },
  'request-transformer': { runsCode: true },
  'response-transformer': { runsCode: true },
  terminate: { runsCode: false },
};

/** The express-gateway condition that runs code from the configuration. */
export const CODE_CONDITION = 'expression';
/**
 * express-gateway's `json-schema` condition: its AJV 6 (`useDefaults`, `coerceTypes`) rewrites
 * `req.body` while it tests it (fills in defaults, coerces types) after our validation and
 * ownership steps have passed it, mounts body parsers of its own, and fetches remote `$ref`s at
 * build time. A condition must only read the request.
 */
export const BODY_REWRITING_CONDITION = 'json-schema';

/** Methods whose requests carry a body the route must validate. `*` (no methods listed) is all of them. */
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', '*']);

/**
 * Paths that are about card secrets whatever step ends them (so that a route moved to another
 * handler keeps the requirement): CVV, PAN, PIN operations, 3DS answer, cardholder authorisation,
 * and the card itself (`/cards/:id`). `/pin-encryption-key` is a public key: not listed.
 */
export const SENSITIVE_PATHS: readonly RegExp[] = [
  /^\/api\/partner\/cards\/[^/]+\/(cvv|pan|authorize)$/,
  /^\/api\/partner\/cards\/[^/]+\/pin\/[^/]+$/,
  /^\/api\/partner\/cards\/[^/]+\/3ds\/answer$/,
  /^\/api\/partner\/cards\/:[^/]+$/,
];

/**
 * Body schemas (a `validate` step's `body`) with fields that name a partner's resource, and the
 * ownership resource of each: a route validating its body with one of them must check every such
 * field with an `ownership` step `in: body` (else a fee check could name another partner's card).
 */
export const OWNED_BODY_FIELDS: Readonly<Record<string, readonly { field: string; resource: string }[]>> = {
  'fee-check': [
    { field: 'cardKey', resource: 'card' },
    { field: 'clientId', resource: 'client' },
  ],
};

/** True when a path has a parameter (`:id` in express-gateway syntax, `{id}` in the spec's). */
export function hasPathParameter(routePath: string): boolean {
  return /(^|\/):[A-Za-z_]/.test(routePath) || /\{[^}/]+\}/.test(routePath);
}
