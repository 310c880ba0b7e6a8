import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import type { HandlerServices } from '../../gateway/handlers/services';
import { schema, type OperationParams } from './schema';

/** The terminal policy of every pipeline: the operation of the catalog the route serves. */
const definition: PolicyDefinition<OperationParams, HandlerServices> = { name: 'operation', schema, policy: loadedOnFirstUse(() => (require('./operation') as typeof import('./operation')).operation) };
export = definition;
