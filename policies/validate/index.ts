import type { PolicyDefinition } from '../policy';
import { schema, type ValidateParams } from './schema';
import { validate } from './validate';

/** Request validation against the JSON Schemas of gateway/schemas. */
const definition: PolicyDefinition<ValidateParams> = { name: 'validate', schema, policy: validate };
export = definition;
