import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';
import { trustedProxies } from '../settings';

/**
 * The address of the client a request comes from, for the limits counted per client (failed
 * authentications, the public routes' rate limit).
 *
 * Behind a load balancer every TCP peer is the balancer: counted by it, one client's failures would
 * throttle every partner. `TRUST_PROXY` names the proxies whose `X-Forwarded-For` is believed
 * (proxy-addr's syntax, as Express's `trust proxy`: `loopback`, `uniquelocal`, addresses and CIDR
 * ranges, comma-separated); the client is then the nearest address not trusted. Unset: the TCP
 * peer, and X-Forwarded-For is ignored (a client could write anything there).
 *
 * @example const clientAddress = clientAddressOf('10.0.0.0/8'); clientAddress(req) // '203.0.113.7'
 */
export function clientAddressOf(trustProxy: string | undefined): (req: IncomingMessage) => string {
  if (!trustProxy) return (req) => req.socket.remoteAddress ?? 'unknown';
  const trust = proxyaddr.compile(trustedProxies(trustProxy));
  return (req) => proxyaddr(req, trust);
}
