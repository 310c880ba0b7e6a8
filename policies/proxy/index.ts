import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import { schema, type ProxyParams } from './schema';

/**
 * Terminal policy ending a read in one upstream call (the upstream's shared client) and a response
 * transform. Registered as `upstream-proxy`: `proxy` is express-gateway's built-in, which stays
 * off (docs/proxy.md).
 */
const definition: PolicyDefinition<ProxyParams> = { name: 'upstream-proxy', schema, policy: loadedOnFirstUse(() => (require('./proxy') as typeof import('./proxy')).upstreamProxy) };
export = definition;
