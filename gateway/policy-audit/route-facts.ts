/**
 * What the policy audit knows about routes and policies that the YAML alone does not say: which
 * routes are public, which terminal steps read the query string or return card data, which
 * express-gateway built-ins exist. Each table is the one place to update when a handler changes
 * (docs/policy-audit.md says when).
 */

/** The base path of every partner route. */
export const PARTNER_BASE_PATH = '/api/partner';

/**
 * The public routes: served without a token, each in exactly one shape (docs/policy-audit.md,
 * "Public routes"). A route is public because of what its pipeline does, never because of its
 * path: on a public path, only GET/HEAD, the route's own local handler and, where `rateLimited`,
 * the public rate limit are allowed (optionally behind es512-jwt); anything else is CRITICAL
 * `public-route-shape`. The health check is not rate limited: the spec says it always answers 200.
 */
export const PUBLIC_ROUTES: ReadonlyMap<string, { handler: string; rateLimited: boolean }> = new Map([
  [`${PARTNER_BASE_PATH}/health-check`, { handler: 'health-check', rateLimited: false }],
  [`${PARTNER_BASE_PATH}/openapi.json`, { handler: 'openapi-document', rateLimited: true }],
  [`${PARTNER_BASE_PATH}/docs`, { handler: 'api-docs', rateLimited: true }],
]);

/** The paths of the public routes (PUBLIC_ROUTES). */
export const PUBLIC_ROUTE_PATHS: ReadonlySet<string> = new Set(PUBLIC_ROUTES.keys());

/** The only methods a public route may answer. */
export const PUBLIC_ROUTE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/**
 * The upstream contract (docs/upstreams.md sections 4 to 6, without the sandboxes' test-only
 * `/__sandbox/` routes): every path an upstream serves, `{name}` marking a parameter. An
 * `upstream-proxy` step's `path` must be one of its upstream's paths with a route parameter in
 * each `{}` place and the fixed segments verbatim: a literal card key or account id (or any other
 * segment) is CRITICAL `proxy-path-contract`. A unit test compares this table with the document.
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
  processing: ['/webhooks/card-created', '/transactions', '/fees', '/delivery-methods', '/cards/status-update'],
};

/** Our policy names, as the partner-gateway plugin registers them (a unit test compares with POLICIES). */
export const POLICY = {
  jwt: 'es512-jwt',
  ownership: 'ownership',
  validate: 'validate',
  idempotency: 'idempotency',
  localHandler: 'local-handler',
  orchestrate: 'orchestrate',
  proxy: 'upstream-proxy',
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

/** Methods whose requests carry a body the route must validate. `*` (no methods listed) is all of them. */
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', '*']);

/**
 * Terminal steps that read `req.query` (besides an `upstream-proxy` step forwarding `query`
 * parameters, which the audit reads from its params). Add a handler here when it starts reading
 * the query string.
 */
export const QUERY_READERS: Readonly<Record<string, { param: string; names: ReadonlySet<string> }>> = {
  [POLICY.localHandler]: {
    param: 'handler',
    names: new Set(['list-individuals', 'list-individual-audit-logs', 'list-individual-card-status-history', 'list-cards']),
  },
  [POLICY.orchestrate]: { param: 'operation', names: new Set(['list-individual-transactions']) },
};

/**
 * Terminal steps that return card data (details, CVV, PAN) or carry PINs and 3DS answers; the
 * route must run the `sensitive-data` policy.
 */
export const SENSITIVE_STEPS: Readonly<Record<string, { param: string; names: ReadonlySet<string> }>> = {
  [POLICY.proxy]: { param: 'response', names: new Set(['cvv', 'card-number', 'card-details']) },
  [POLICY.orchestrate]: {
    param: 'operation',
    names: new Set(['set-card-3ds-answer', 'change-card-pin', 'force-card-pin-lock', 'reset-card-pin-tries', 'authorize-cardholder']),
  },
};

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
 * field with an `ownership` step `in: body` (issue 11: a fee check named another partner's card).
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
