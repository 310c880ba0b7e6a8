import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import { UPSTREAM_OPERATION } from '../../gateway/http/request-facts';
import type { IdempotencyServices } from './idempotency';
import { schema, type IdempotencyParams } from './schema';

/** Idempotency-Key handling for creation routes. */
const definition: PolicyDefinition<IdempotencyParams, IdempotencyServices> = { name: 'idempotency', schema, provides: [UPSTREAM_OPERATION], policy: loadedOnFirstUse(() => (require('./idempotency') as typeof import('./idempotency')).idempotency) };
export = definition;
