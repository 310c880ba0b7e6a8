// The slots of the facts our policies establish (gateway/http/request-facts.ts: each written by
// the one policy that provides it, read through its FactKey; handlers get them in a typed context).
import type { Partner } from '../gateway/partners/partner-store';
import type { OwnedResource, UpstreamOperation } from '../gateway/http/request-facts';

declare global {
  namespace Express {
    interface Request {
      /** Accepted or generated `x-request-id`, echoed on the response and forwarded upstream. */
      requestId: string;
      /**
       * Set by the runtime (gateway/runtime) when a pipeline serves the request: the name of its
       * apiEndpoint in gateway.config.yml (`get-card`). Metrics label and rate limits count by it.
       */
      apiEndpointName?: string;
      /**
       * Set by the partner app's body parser (gateway/http/body.ts, `recordReceived`) when the
       * request declared a body: whether it held anything but whitespace. Unset: no body declared.
       * Read through `carriesBody(req)`, which takes unset as no body.
       */
      bodyReceived?: boolean;
      /** Set by the es512-jwt policy once the token is verified (the PARTNER fact). */
      partner?: Partner;
      /** Set by the ownership policy: the checked resource of the path and its owner (the OWNERSHIP fact). */
      ownership?: OwnedResource;
      /** Set by the validate policy with a `body` schema: the validated body, also `req.body` (the VALIDATED_BODY fact). */
      validatedBody?: unknown;
      /** Set by the validate policy with a `query` schema: the validated query, also `req.query` (the VALIDATED_QUERY fact). */
      validatedQuery?: unknown;
      /**
       * Set by the idempotency policy when the request claimed its Idempotency-Key: the upstream
       * operation id of this partner operation, the same for every retry of the key (migration 007),
       * and whether an earlier attempt held the key (its upstream call may have been applied): the
       * UPSTREAM_OPERATION fact.
       */
      upstreamOperation?: UpstreamOperation;
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
