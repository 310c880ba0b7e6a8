import es512Jwt from './es512-jwt';
import idempotency from './idempotency';
import operation from './operation';
import ownership from './ownership';
import type { PolicyDefinition } from './policy';
import rateLimit from './rate-limit';
import sensitiveData from './sensitive-data';
import validate from './validate';

/** Every policy of the Partner Gateway plugin, in the order a pipeline runs them. */
export const POLICIES: PolicyDefinition<any>[] = [
  es512Jwt,
  rateLimit,
  ownership,
  sensitiveData,
  validate,
  idempotency,
  operation,
];

/** Name of the authentication policy every protected route must run. */
export const JWT_POLICY = es512Jwt.name;
