import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import { schema, type OwnershipParams } from './schema';

/** Ownership of individuals and cards (spec section 5). */
const definition: PolicyDefinition<OwnershipParams> = { name: 'ownership', schema, policy: loadedOnFirstUse(() => (require('./ownership') as typeof import('./ownership')).ownership) };
export = definition;
