import type { PolicyDefinition } from '../policy';
import { idempotency } from './idempotency';
import { schema, type IdempotencyParams } from './schema';

/** Idempotency-Key handling for creation routes. */
const definition: PolicyDefinition<IdempotencyParams> = { name: 'idempotency', schema, policy: idempotency };
export = definition;
