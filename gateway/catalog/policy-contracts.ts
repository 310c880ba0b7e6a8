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
