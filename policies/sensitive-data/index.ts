import type { PolicyDefinition } from '../policy';
import { schema, type SensitiveDataParams } from './schema';
import { sensitiveData } from './sensitive-data';

/** Marks routes returning card data, PINs or 3DS answers (no-store, URL kept out of the access log). */
const definition: PolicyDefinition<SensitiveDataParams> = { name: 'sensitive-data', schema, policy: sensitiveData };
export = definition;
