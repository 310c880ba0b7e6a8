import type { Request } from 'express';
import type { Partner } from '../partners/partner-store';
import type { OwnedKind, Owner } from '../ownership';
import type { UpstreamOperation } from '../idempotency/operation-id';

/**
 * The facts a pipeline's steps establish about a request for the steps after them and the
 * operation's handler, each under one typed key: the partner (es512-jwt), the owned resource of the
 * path (ownership), the validated body and query (validate) and the upstream operation of a claimed
 * Idempotency-Key (idempotency). A policy declares the keys it provides (`provides` of its
 * definition, policies/policy.ts) and writes the key's slot on the request. The handler's context and
 * the idempotency step read through {@link FactKey.read}, which says "absent" rather than asserting
 * presence; the S1 steps (rate-limit, ownership, the proxy) and the access log read the slots as
 * optional fields (`req.partner?.`), never asserted, so the hot path keeps its code. The handler never
 * reads them: the `operation` policy reads the facts its operation's entry implies, once per request,
 * into the handler's typed context (gateway/handlers/context.ts).
 */

/** A resource whose owner the ownership step checked, and that owner. */
export interface OwnedResource<Kind extends OwnedKind = OwnedKind> extends Owner {
  kind: Kind;
  id: string;
}

export type { UpstreamOperation } from '../idempotency/operation-id';

/** What a fact is called in a handler's context. */
export type FactName = 'partner' | 'ownership' | 'body' | 'query' | 'operation';

/** One fact: its name, the policy whose step provides it, and how it is read off a request (undefined: not provided). */
export interface FactKey<T> {
  readonly name: FactName;
  readonly providedBy: string;
  read(req: Request): T | undefined;
}

/** The verified token's partner: es512-jwt writes `req.partner`. */
export const PARTNER: FactKey<Partner> = { name: 'partner', providedBy: 'es512-jwt', read: (req) => req.partner };

/** The resource of the path whose owner is the caller: ownership (`in: path`) writes `req.ownership`. */
export const OWNERSHIP: FactKey<OwnedResource> = { name: 'ownership', providedBy: 'ownership', read: (req) => req.ownership };

/** The body as its schema validated it (defaults applied): validate (`body:`) writes `req.validatedBody`, the same value as `req.body`. */
export const VALIDATED_BODY: FactKey<unknown> = { name: 'body', providedBy: 'validate', read: (req) => req.validatedBody };

/**
 * The query as its schema validated it (integers coerced, defaults applied): validate (`query:`)
 * writes `req.validatedQuery`, the same value as `req.query`.
 */
export const VALIDATED_QUERY: FactKey<unknown> = { name: 'query', providedBy: 'validate', read: (req) => req.validatedQuery };

/**
 * A fact a step or handler needs that no step before it provided: a pipeline the boot guards should
 * have refused. Thrown (or passed to `next`), it is the 500 problem, and the problem writer logs it.
 */
export class MissingFactError extends Error {
  constructor(fact: FactKey<unknown>, neededBy: string) {
    super(`${neededBy} needs the ${fact.name} fact, which no ${fact.providedBy} step before it provided (a pipeline the boot guards should have refused)`);
    this.name = 'MissingFactError';
  }
}

/** The upstream operation of a claimed Idempotency-Key: idempotency writes `req.upstreamOperation`; without a key, the request's own (gateway/idempotency/operation-id.ts). */
export const UPSTREAM_OPERATION: FactKey<UpstreamOperation> = { name: 'operation', providedBy: 'idempotency', read: (req) => req.upstreamOperation };
