/**
 * What the layers below the policies know of the policies' params, declared once here: the proxy's
 * named response transforms (an operation's entry names one) and the defaults the OpenAPI document
 * states (the token's clock skew and lifetime, an idempotency key's life). The policies' schemas
 * (policies/<name>/schema.ts) take them from here, so that the catalog and the OpenAPI document
 * import no file of the policies' layer.
 */

/** Named response transforms of the proxy policy (policies/proxy/transforms.ts). */
export const RESPONSE_TRANSFORMS = [
  'card-status',
  'card-details',
  'cvv',
  'card-number',
  'limit',
  'limits',
  'limit-available',
  'pin-encryption-key',
  'fee',
  'delivery-methods',
] as const;
export type ResponseTransformName = (typeof RESPONSE_TRANSFORMS)[number];

/** The es512-jwt policy's defaults: tolerance on exp, iat and nbf, and the largest exp - iat, in seconds. */
export const JWT_PARAM_DEFAULTS = { clockSkewSeconds: 30, maxLifetimeSeconds: 300 } as const;

/** The idempotency policy's default: how long a key is remembered, in hours. */
export const IDEMPOTENCY_TTL_HOURS_DEFAULT = 24;

/**
 * The policies whose params follow from the operation a pipeline ends in: a step of theirs may be
 * written without params (`- ownership: []`) and takes those its operation's catalog entry implies
 * ({@link impliedParams}). Written params stay accepted when they agree; the boot's rules refuse a
 * pipeline that leaves out what the entry implies.
 */
export const PARAMS_FROM_CATALOG = ['ownership', 'validate', 'sensitive-data'] as const;
export type ParamsFromCatalogPolicy = (typeof PARAMS_FROM_CATALOG)[number];

/**
 * What of an operation's entry (`Operation`, gateway/catalog/operation.ts) implies a step's params;
 * declared here, structurally, because operation.ts imports this file.
 */
export interface ImpliedBy {
  method: string;
  ownership?: readonly { resource: string; param: string; in: 'path' | 'body' }[];
  schemas?: { body?: string; query?: string; params?: string };
  sensitive?: boolean;
}

/**
 * The action params an operation's entry implies for a step of `policy`, one map per action:
 * `ownership`, one action per ownership check (`in: body` written only for a body field, `path`
 * being the default); `validate`, one action with every request schema of the entry;
 * `sensitive-data`, one action without params (it takes none) for an operation that returns card
 * data. Undefined when the entry implies nothing for that policy, or the policy takes nothing from
 * the catalog.
 *
 * @example impliedParams('ownership', OPERATIONS['get-card']) // [{ resource: 'card', param: 'id' }]
 * @example impliedParams('validate', OPERATIONS['lock-card']) // [{ body: 'card-status-change' }]
 */
export function impliedParams(policy: string, operation: ImpliedBy): Record<string, string>[] | undefined {
  switch (policy) {
    case 'ownership': {
      const checks = operation.ownership ?? [];
      return checks.length === 0 ? undefined : checks.map((c): Record<string, string> => (c.in === 'body' ? { resource: c.resource, in: 'body', param: c.param } : { resource: c.resource, param: c.param }));
    }
    case 'validate': {
      const schemas = operation.schemas ?? {};
      const params: Record<string, string> = {};
      for (const where of ['body', 'query', 'params'] as const) if (schemas[where] !== undefined) params[where] = schemas[where];
      return Object.keys(params).length === 0 ? undefined : [params];
    }
    case 'sensitive-data':
      return operation.sensitive ? [{}] : undefined;
    default:
      return undefined;
  }
}
