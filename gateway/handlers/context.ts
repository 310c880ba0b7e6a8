import type { Request, RequestHandler, Response } from 'express';
import type { Operation } from '../catalog';
import { upstreamOperationOf } from '../idempotency/operation-id';
import { writeAnswer, type HandlerAnswer } from '../http/answer';
import { MissingFactError, OWNERSHIP, PARTNER, VALIDATED_BODY, VALIDATED_QUERY, type FactKey, type FactName, type OwnedResource, type UpstreamOperation } from '../http/request-facts';
import type { OwnedKind } from '../ownership';
import type { Partner } from '../partners/partner-store';
import type { SchemaName } from '../schemas';
import type { BodyOf } from './request-bodies';
import type { QueryOf } from './request-queries';

/**
 * The typed context of a handler: the facts its operation's catalog entry implies, read off the
 * request once, by the `operation` policy, before the handler runs (like Hono's `c.get('partner')`,
 * but checked by the compiler against the entry: a handler that asks for a fact its entry does not
 * imply does not compile against the entry it is registered for in `HANDLERS`).
 *
 * - `partner`: every operation that is not public (the pipeline runs es512-jwt first);
 * - `ownership`: the resource of the path whose owner the entry checks (`ownership: [{ in: 'path' }]`),
 *   typed by its kind;
 * - `body`: the validated body, where the entry declares a body schema, typed from that schema
 *   (gateway/handlers/request-bodies.ts);
 * - `query`: the validated query (integers coerced, defaults filled in), where the entry declares a
 *   query schema, typed from that schema (gateway/handlers/request-queries.ts);
 * - `operation`: the upstream operation of an orchestration (its claimed Idempotency-Key's, or the
 *   request's own).
 */
export interface PartnerFacts {
  partner: Partner;
}
export interface OwnerFacts<Kind extends OwnedKind> {
  ownership: OwnedResource<Kind>;
}
export interface BodyFacts<Body = unknown> {
  body: Body;
}
export interface QueryFacts<Query = unknown> {
  query: Query;
}
export interface OperationFacts {
  operation: UpstreamOperation;
}

/** The kind of the resource of the path whose owner an entry's checks name (never: none). */
type PathKind<Checks> = Checks extends readonly (infer Check)[] ? (Check extends { in: 'path'; resource: infer Kind extends OwnedKind } ? Kind : never) : never;

/** The facts a catalog entry implies for its handler. */
export type FactsOf<Entry extends Operation> = (Entry extends { public: object } ? unknown : PartnerFacts) &
  ([PathKind<Entry['ownership']>] extends [never] ? unknown : OwnerFacts<PathKind<Entry['ownership']>>) &
  (Entry extends { schemas: { body: infer Schema extends SchemaName } } ? BodyFacts<BodyOf<Schema>> : unknown) &
  (Entry extends { schemas: { query: infer Schema extends SchemaName } } ? QueryFacts<QueryOf<Schema>> : unknown) &
  (Entry extends { ends: { kind: 'orchestration' } } ? OperationFacts : unknown);

/**
 * What a handler may use of the response: its `locals` (the upstream timing of its calls, its
 * access-log fields). It never writes to it: it returns its answer.
 */
export type HandlerResponse = Pick<Response, 'locals'>;

/**
 * A handler: returns the answer to a request (gateway/http/answer.ts: a JSON body by default, bytes
 * with their content type, or none), from its typed facts and `req` (the path, query and headers);
 * the `operation` policy writes it through the one answer writer. A refusal is a thrown
 * GatewayError (a rejection or a throw reaches the problem writer).
 */
export type OperationHandler<Facts> = (facts: Facts, req: Request, res: HandlerResponse) => Promise<HandlerAnswer>;

/** A fact an entry's handler needs, and the step that provides it (for the boot guards' tie, test/unit/gateway/handlers). */
export interface FactRequirement {
  key: FactKey<unknown>;
  /** What the providing step must say: the ownership step's resource and parameter, the validate step's body or query schema. */
  step?: { resource: OwnedKind; param: string } | { body: SchemaName } | { query: SchemaName };
}

/**
 * The facts an entry's handler needs from the steps before it, each provided by a step the boot
 * guards require of the entry's pipeline: es512-jwt first on every route that is not public
 * (`jwt-first`), an unconditional ownership step for each resource the entry checks, an
 * unconditional validate step for its body and its query schema (`catalog-contradiction`).
 */
export function factsRequiredBy(entry: Operation): FactRequirement[] {
  const required: FactRequirement[] = [];
  if (!entry.public) required.push({ key: PARTNER });
  const owned = entry.ownership?.find((check) => check.in === 'path');
  if (owned) required.push({ key: OWNERSHIP, step: { resource: owned.resource, param: owned.param } });
  const body = entry.schemas?.body;
  if (body !== undefined) required.push({ key: VALIDATED_BODY, step: { body } });
  const query = entry.schemas?.query;
  if (query !== undefined) required.push({ key: VALIDATED_QUERY, step: { query } });
  return required;
}

/**
 * The facts read off one request. `operation` is made when the handler reads it: the handlers
 * that send an operation id take it as they start (before their own refusals: nothing reads the
 * request's operation after its handler), and an orchestration that sends none makes none, as
 * before.
 */
class ReadFacts {
  readonly #req: Request;
  constructor(req: Request) {
    this.#req = req;
  }
  get operation(): UpstreamOperation {
    return upstreamOperationOf(this.#req);
  }
}

/**
 * Reads, once per request, the typed facts of an entry's handler off the request. Built once per
 * pipeline. A required fact that is absent (or an owned resource of another kind) throws
 * {@link MissingFactError}: the request gets the 500 problem and the error is logged by the problem
 * writer; the boot guards make it unreachable. An orchestration's upstream operation is the claimed
 * Idempotency-Key's, else the request's own, made when the handler reads it.
 *
 * Typed by this signature: the facts of `Entry` (`FactsOf`). The implementation below reads the
 * facts `factsRequiredBy(entry)` lists, which is `FactsOf`'s rule at run time; the compiler cannot
 * check a value against a conditional type of a generic entry, so the two are tied by the tests
 * (test/unit/gateway/handlers/context.test.ts) rather than by a cast.
 */
export function handlerFactsReader<Entry extends Operation>(operation: string, entry: Entry): (req: Request) => FactsOf<Entry>;
export function handlerFactsReader(operation: string, entry: Operation): (req: Request) => unknown {
  const required = factsRequiredBy(entry).map(({ key, step }) => ({ key, kind: step && 'resource' in step ? step.resource : undefined }));
  const neededBy = `the handler of operation "${operation}"`;
  return function readHandlerFacts(req) {
    const facts: ReadFacts & Partial<Record<Exclude<FactName, 'operation'>, unknown>> = new ReadFacts(req);
    for (const { key, kind } of required) {
      const value = key.read(req);
      if (value === undefined || (kind !== undefined && (value as OwnedResource).kind !== kind)) throw new MissingFactError(key, neededBy);
      if (key.name !== 'operation') facts[key.name] = value;
    }
    return facts;
  };
}

/**
 * The request handler that runs `handler` with the facts `readFacts` reads and writes the answer it
 * returns (`writeAnswer`): a throw or a rejection goes to `next`, and so to the problem writer.
 */
export function runWithFacts<Facts>(handler: OperationHandler<Facts>, readFacts: (req: Request) => Facts): RequestHandler {
  return function handleOperation(req, res, next) {
    let answered: Promise<HandlerAnswer>;
    try {
      answered = handler(readFacts(req), req, res);
    } catch (err) {
      next(err);
      return;
    }
    answered.then((answer) => {
      try {
        writeAnswer(res, answer);
      } catch (err) {
        next(err);
      }
    }, next);
  };
}
