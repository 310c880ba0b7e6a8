import type { PolicyDefinition } from '../policy';
import { ownership } from './ownership';
import { schema, type OwnershipParams } from './schema';

/** Ownership of individuals and cards (spec section 5). */
const definition: PolicyDefinition<OwnershipParams> = { name: 'ownership', schema, policy: ownership };
export = definition;
