import { JWT_PARAM_DEFAULTS } from '../../gateway/catalog/policy-contracts';
import type { PolicySchema } from '../policy-schema';

/** Action params of the es512-jwt policy. */
export interface Es512JwtParams {
  clockSkewSeconds: number;
  maxLifetimeSeconds: number;
  cacheVerifiedTokens?: boolean;
}

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/es512-jwt.json',
  type: 'object',
  description:
    'Authenticates the partner: Authorization: Bearer <JWT> signed with ES512 (P-521) by one of the partner\'s active keys, with iss, sub, iat and exp.',
  properties: {
    clockSkewSeconds: {
      type: 'integer',
      minimum: 0,
      maximum: 300,
      default: JWT_PARAM_DEFAULTS.clockSkewSeconds,
      description: 'Tolerance in seconds applied to exp, iat and nbf.',
    },
    maxLifetimeSeconds: {
      type: 'integer',
      minimum: 1,
      maximum: 86400,
      default: JWT_PARAM_DEFAULTS.maxLifetimeSeconds,
      description: 'Largest accepted exp - iat in seconds (the spec recommends 60).',
    },
    cacheVerifiedTokens: {
      type: 'boolean',
      default: true,
      description:
        'Reuse the verification of an identical token until its exp (keyed by a hash of the whole token; emptied for a partner when its keys or status change).',
    },
  },
};
