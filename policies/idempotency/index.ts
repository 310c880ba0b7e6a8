import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import type { IdempotencyServices } from './idempotency';
import { schema, type IdempotencyParams } from './schema';

/** Idempotency-Key handling for creation routes. */
const definition: PolicyDefinition<IdempotencyParams, IdempotencyServices> = { name: 'idempotency', schema, policy: loadedOnFirstUse(() => (require('./idempotency') as typeof import('./idempotency')).idempotency) };
export = definition;
