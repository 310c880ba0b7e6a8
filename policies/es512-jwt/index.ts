import type { PolicyDefinition } from '../policy';
import { es512Jwt } from './es512-jwt';
import { schema, type Es512JwtParams } from './schema';

/** ES512 partner authentication (spec section 5). */
const definition: PolicyDefinition<Es512JwtParams> = { name: 'es512-jwt', schema, policy: es512Jwt };
export = definition;
