import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import { PARTNER } from '../../gateway/http/request-facts';
import type { Es512JwtServices } from './es512-jwt';
import { schema, type Es512JwtParams } from './schema';

/** ES512 partner authentication (spec section 5). */
const definition: PolicyDefinition<Es512JwtParams, Es512JwtServices> = { name: 'es512-jwt', schema, provides: [PARTNER], policy: loadedOnFirstUse(() => (require('./es512-jwt') as typeof import('./es512-jwt')).es512Jwt) };
export = definition;
