import type { ErrorCode } from '../errors';
import type { SchemaName } from '../schemas';
import type { ResponseSchemaName } from '../schemas/responses';
import type { ResponseTransformName } from './policy-contracts';
import type { StatusChange } from '../cards/transitions';
import type { OwnedKind } from '../ownership';

/** The base path of every partner route; the OpenAPI document's server URL. */
export const PARTNER_BASE_PATH = '/api/partner';

/** Tags (groups of operations in the rendered reference), in display order. */
export const TAGS = [
  { name: 'Partner', description: 'Who you are: the partner the token authenticates, its B2B tenants and newest individuals.' },
  { name: 'Individual accounts', description: 'Onboard individual cardholders, read them, their audit log, card status history and transactions, and issue cards under them (spec 4.2).' },
  { name: 'Cards', description: 'Read and list your cards; nickname, emboss name, 3-D Secure, replacement and re-issue (spec 4.3).' },
  { name: 'Card status', description: 'Lock, unlock, activate, temporarily lock and restrict a card. The gateway checks the transition first (409 `invalid_transition`); docs/cards.md has the table.' },
  { name: 'Card secrets and PIN', description: 'CVV and card number encrypted under your RSA key, and the PIN operations (PIN blocks encrypted under the issuer key). Every read is audited; nothing is logged.' },
  { name: 'Card limits', description: 'Spending and withdrawal limits of a card: dailyPurchase, monthlyPurchase, dailyWithdrawal, monthlyWithdrawal, singleTransaction.' },
  { name: 'Spend controls', description: "What the gateway lets a card spend, checked on each authorization: merchant categories and countries allowed or blocked, a maximum per transaction and velocity over rolling windows; a card's own and your default for all your cards, both of which a purchase must pass (docs/spend-controls.md)." },
  { name: 'Fees and delivery', description: 'Card issuing and delivery fees, and the delivery methods of a country (spec 4.4).' },
  { name: 'Wallet provisioning', description: "Add a card to Apple Pay or Google Pay from your app (push provisioning): the gateway passes the wallet's inputs to the card processing system and answers its payload for the wallet, never stored or logged (docs/tokens.md)." },
  {
    name: 'Tokens',
    description:
      "The network tokens of your cards: each card a wallet (Apple Pay, Google Pay, Samsung Pay) or a merchant holds, made only after the gateway decided its tokenization for you; their statuses, suspend, resume and deactivate. The card's state governs its tokens: a lock suspends them, the unlock resumes them, a final restriction deactivates them, a replacement moves them (docs/tokens.md).",
  },
  { name: 'Transactions', description: 'Your card transactions, each one object from its authorization to its clearing, reversal, expiry or refund, with its `history`; searchable across all your cards (docs/transactions.md).' },
  { name: 'Authorization endpoint', description: 'Your decision endpoint: the gateway asks it, signed (`Partner-Gateway-Signature`), to approve or decline each purchase of your cards while it happens, within your `timeoutMs`; otherwise your `defaultDecision` applies (docs/authorization-endpoint.md).' },
  { name: 'Webhooks', description: 'Endpoints that receive your events, signed (`Partner-Gateway-Signature`) and retried for 3 days; their secrets, rotation and delivery attempts (docs/webhooks.md).' },
  { name: 'Events', description: 'What happened to your cards and individuals, newest first, kept 30 days: each event is written with the change that causes it (docs/events.md). The `webhooks` section documents each type.' },
  { name: 'Sandbox', description: 'Sandbox mode only (elsewhere these routes answer 404): make the sandboxes authorize, clear, reverse, expire or refund a transaction, tokenize a card for a wallet (and enter its verification code, pay with the token), or change a card\'s status on their own, as a merchant, a wallet or the issuer would, to see the events your webhooks receive (docs/sandbox.md).' },
  { name: 'Service', description: 'Public routes without a token: liveness probe and this documentation.' },
] as const;
export type TagName = (typeof TAGS)[number]['name'];

/** The success answer of an operation, as the OpenAPI document shows it. */
export interface SuccessAnswer {
  status: 200 | 201 | 202 | 204;
  description: string;
  /** A JSON body of this schema, or an array of it (its example: gateway/openapi/examples.ts, by schema). */
  body?: { schema: ResponseSchemaName; array?: boolean };
  /** A body that is not JSON of a response schema (health check, the OpenAPI document, its page). */
  raw?: { mediaType: string; schema: Record<string, unknown>; example: unknown };
  /** Response headers worth documenting (components.headers names). */
  headers?: readonly string[];
}

/** A resource whose owner the pipeline's `ownership` step checks, and where its id is. */
export interface OwnershipCheck {
  resource: OwnedKind;
  /** The path parameter (`in: 'path'`) or top-level body field (`in: 'body'`) holding the id. */
  param: string;
  in: 'path' | 'body';
}

/** An upstream the gateway calls straight (the proxy's upstreams). */
export type ProxiedUpstream = 'issuer' | 'processing';

/**
 * How an operation ends:
 * - `local`: a handler of the gateway answers from PostgreSQL or memory (gateway/handlers);
 * - `orchestration`: a handler calls upstreams through the typed clients and keeps PostgreSQL
 *   consistent with them (gateway/handlers);
 * - `upstream`: one upstream call made by the proxy (policies/proxy), its answer reduced by a named
 *   transform (policies/proxy/transforms.ts). `path` is a path of the upstream's contract
 *   (docs/upstreams.md) with the route's `{parameters}`; `query` lists the query parameters sent on.
 *
 * A handler registers against its entry's catalog key (`HANDLERS`, gateway/handlers/index.ts),
 * typed by that entry: the compiler checks that every `local` and `orchestration` entry has one,
 * and that the handler's needs (a `statusChange`, an `audit` action) are the entry's. The catalog
 * cannot reference handlers itself (they sit a layer above it, and reading the catalog in the boot
 * guards, the policy audit and the OpenAPI document must load none of them): docs/decisions.md.
 */
export type Ending =
  | { kind: 'local' }
  | { kind: 'orchestration' }
  | {
      kind: 'upstream';
      upstream: ProxiedUpstream;
      method: 'GET' | 'POST';
      path: string;
      query?: readonly string[];
      response: ResponseTransformName;
      setBody?: Readonly<Record<string, string>>;
    };

/**
 * One partner operation. Its name (the catalog key) is the apiEndpoint's and the pipeline's name in
 * gateway.config.yml, and the operationId of the OpenAPI document.
 */
export interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The express path, under {@link PARTNER_BASE_PATH}, as gateway.config.yml lists it. */
  path: string;
  /**
   * Served without a token, in one exact shape only: GET or HEAD at its own path, optionally behind
   * the public rate limit, ending in its own operation (the policy audit's `public-route-shape`).
   * Every other operation needs es512-jwt first.
   */
  public?: { rateLimited: boolean };
  /** The resources whose owner must be the caller; the pipeline runs an ownership step for each. */
  ownership?: readonly OwnershipCheck[];
  /** Request schemas (gateway/schemas) the pipeline validates; the operation reads these only. */
  schemas?: { body?: SchemaName; query?: SchemaName; params?: SchemaName };
  /** Returns or carries card data, a PIN or a 3DS answer: the pipeline runs `sensitive-data`. */
  sensitive?: boolean;
  ends: Ending;
  /** The audit entry's operation, for an operation that writes one. */
  audit?: string;
  /**
   * The card status change the operation makes (gateway/cards/transitions.ts), by reference: its
   * handler checks and sends this one, and the operator's admin route makes the same change
   * through {@link OPERATOR_STATUS_CHANGES}.
   */
  statusChange?: StatusChange;
  /**
   * Served in sandbox mode only (it drives the sandboxes' control routes): elsewhere its pipeline is
   * not mounted (`servedPipelines`), so calls are answered 404 `route_not_found` before any step,
   * and the policy audit shows the route as off.
   */
  sandboxOnly?: true;
  /** The OpenAPI document's text and answer. */
  doc: {
    summary: string;
    description?: string;
    tag: TagName;
    /** 409 codes beyond those the pipeline implies (idempotency, upstream conflicts). */
    conflicts?: readonly ErrorCode[];
    /** Answers 404 `not_found` without an ownership step (a resource the partner may not have, e.g. its one decision endpoint). */
    notFound?: true;
    answer: SuccessAnswer;
  };
}
