import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import { VALIDATED_BODY, VALIDATED_QUERY } from '../../gateway/http/request-facts';
import { schema, type ValidateParams } from './schema';

/** Request validation against the JSON Schemas of gateway/schemas. */
const definition: PolicyDefinition<ValidateParams> = { name: 'validate', schema, provides: [VALIDATED_BODY, VALIDATED_QUERY], policy: loadedOnFirstUse(() => (require('./validate') as typeof import('./validate')).validate) };
export = definition;
