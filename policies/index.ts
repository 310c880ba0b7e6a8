import es512Jwt from './es512-jwt';
import localHandler from './local-handler';
import type { PolicyDefinition } from './policy';

/** Every policy of the Partner Gateway plugin, in the order an operator reads them. */
export const POLICIES: PolicyDefinition<any>[] = [es512Jwt, localHandler];

/** Name of the authentication policy every protected route must run. */
export const JWT_POLICY = es512Jwt.name;

