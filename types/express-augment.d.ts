// The typed request context our policies share (like Express Gateway's egContext).
import type { Partner } from '../gateway/partners/partner-store';

declare global {
  namespace Express {
    interface Request {
      /** Accepted or generated `x-request-id`, echoed on the response and forwarded upstream. */
      requestId: string;
      /** Set by the es512-jwt policy once the token is verified. */
      partner?: Partner;
      /** Set by the ownership policy: the checked resource and its owner. */
      ownership?: { kind: 'individual' | 'card' | 'client'; id: string; partnerId: string; individualId?: string; tenantId?: string };
      /** Verified claims and key of the request's token. */
      auth?: { kid: string; claims: { iss: string; sub: string; iat: number; exp: number } };
    }
    interface Locals {
      /** Milliseconds spent waiting for upstreams while serving this request (for the access log). */
      upstreamLatencyMs?: number;
      /** The route pattern that served the request (for the access log). */
      route?: string;
    }
  }
}

export {};
