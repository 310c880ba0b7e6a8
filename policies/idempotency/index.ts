import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import { schema, type IdempotencyParams } from './schema';

/** Idempotency-Key handling for creation routes. */
const definition: PolicyDefinition<IdempotencyParams> = { name: 'idempotency', schema, policy: loadedOnFirstUse(() => (require('./idempotency') as typeof import('./idempotency')).idempotency) };
export = definition;
