import { loadedOnFirstUse, type PolicyDefinition } from '../policy';
import type { ProxyServices } from './proxy';
import { schema, type ProxyParams } from './schema';

/**
 * The call to an upstream (the upstream's shared client) and its response transform, for the
 * catalog's operations that call an upstream straight: the `operation` policy sets it up from their
 * entry. Not registered as a pipeline policy of its own; named `upstream-proxy`, not `proxy`: that
 * is express-gateway's built-in, which stays off (docs/proxy.md).
 */
const definition: PolicyDefinition<ProxyParams, ProxyServices> = { name: 'upstream-proxy', schema, policy: loadedOnFirstUse(() => (require('./proxy') as typeof import('./proxy')).upstreamProxy) };
export = definition;
