import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import { schema, type ProxyParams } from './schema';

/**
 * Terminal policy proxying a read to an upstream (http-proxy-middleware). Registered as
 * `upstream-proxy`: `proxy` is express-gateway's built-in, which stays off (docs/proxy.md).
 */
const definition: PolicyDefinition<ProxyParams> = { name: 'upstream-proxy', schema, policy: loadedOnFirstUse(() => (require('./proxy') as typeof import('./proxy')).upstreamProxy) };
export = definition;
