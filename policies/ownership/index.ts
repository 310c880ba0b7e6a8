import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import { OWNERSHIP } from '../../gateway/http/request-facts';
import type { OwnershipServices } from './ownership';
import { schema, type OwnershipParams } from './schema';

/** Ownership of individuals and cards (spec section 5). */
const definition: PolicyDefinition<OwnershipParams, OwnershipServices> = { name: 'ownership', schema, provides: [OWNERSHIP], policy: loadedOnFirstUse(() => (require('./ownership') as typeof import('./ownership')).ownership) };
export = definition;
