import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import { schema, type SensitiveDataParams } from './schema';

/** Marks routes returning card data, PINs or 3DS answers (no-store, URL kept out of the access log). */
const definition: PolicyDefinition<SensitiveDataParams> = { name: 'sensitive-data', schema, policy: loadedOnFirstUse(() => (require('./sensitive-data') as typeof import('./sensitive-data')).sensitiveData) };
export = definition;
