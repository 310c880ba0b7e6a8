import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import { schema, type Es512JwtParams } from './schema';

/** ES512 partner authentication (spec section 5). */
const definition: PolicyDefinition<Es512JwtParams> = { name: 'es512-jwt', schema, policy: loadedOnFirstUse(() => (require('./es512-jwt') as typeof import('./es512-jwt')).es512Jwt) };
export = definition;
