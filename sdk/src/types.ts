/**
 * Types of the API, derived from the generated ones (./generated/api.ts): the request and answer of
 * each operation by its operationId, the schemas by name, the problem, and the webhook events.
 */
import type { components, operations, webhooks } from './generated/api';
import type { OperationId } from './generated/operations';

export type { components, operations, paths, webhooks } from './generated/api';
export type { OperationId } from './generated/operations';

/** Every schema of the document by name: `Schemas['Card']`, `Schemas['individual-create']`. */
export type Schemas = components['schemas'];

type Op<K extends OperationId> = operations[K];

/** The path parameters of an operation. */
export type PathParamsOf<K extends OperationId> = Op<K>['parameters'] extends { path: infer P } ? P : never;

/** The query parameters of an operation (`never` when it takes none). */
export type QueryOf<K extends OperationId> = NonNullable<Op<K>['parameters']['query']>;

/** The JSON body of an operation (`never` when it takes none). */
export type BodyOf<K extends OperationId> = Op<K> extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : Op<K> extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B
    : never;

type SuccessStatus<K extends OperationId> = Extract<keyof Op<K>['responses'], 200 | 201 | 202 | 204>;
type ContentOf<R> = R extends { content: { 'application/json': infer T } } ? T : R extends { content: { [type: string]: infer T } } ? T : void;

/** The success answer of an operation (`void` for a 204). */
export type AnswerOf<K extends OperationId> = ContentOf<Op<K>['responses'][SuccessStatus<K>]>;

/** The items of a list operation's answer (`data`). */
export type ItemOf<K extends OperationId> = AnswerOf<K> extends { data: (infer T)[] } ? T : never;

/** An RFC 9457 problem as the gateway answers it. */
export type Problem = Schemas['Problem'];
/** One invalid field of a `validation_failed` problem. */
export type InvalidParam = Schemas['InvalidParam'];
/** Every error code the gateway documents (docs/errors.md). */
export type ErrorCode = Problem['code'];

export type Card = Schemas['Card'];
export type CardListItem = Schemas['CardListItem'];
export type CardStatusResult = Schemas['CardStatusResult'];
export type IndividualAccount = Schemas['IndividualAccount'];
export type Transaction = Schemas['Transaction'];
export type Me = Schemas['Me'];
export type PinEncryptionKey = Schemas['PinEncryptionKey'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type AuthorizationEndpoint = Schemas['AuthorizationEndpoint'];

/** The event types the gateway delivers to webhook endpoints. */
export type WebhookEventType = keyof webhooks;
type WebhookPayload<T extends WebhookEventType> = webhooks[T]['post'] extends { requestBody: { content: { 'application/json': infer E } } } ? E : never;
/** A webhook event (of one type, or of any when no type is given): the body the gateway POSTs. */
export type WebhookEvent<T extends WebhookEventType = WebhookEventType> = { [K in T]: WebhookPayload<K> }[T];

/**
 * The `authorization.request` the gateway POSTs to your decision endpoint
 * (docs/authorization-endpoint.md). Written by hand: the OpenAPI document does not describe it.
 */
export interface AuthorizationRequest {
  id: string;
  type: 'authorization.request';
  createdAt: string;
  partnerId: string;
  data: {
    authorization: {
      id: string;
      /** In `currency`, the card's billing currency, as transactions show it (12.5 is 12.50; the sandbox sends it so). */
      amount: number;
      currency: string;
      type: string;
      merchant: { name: string; mcc: string; city?: string | null; country: string };
    };
    /** The card as events carry it: never a card number, CVV or PIN. */
    card: Schemas['EventCardCreated']['data']['card'];
  };
}

/** Your answer to an `authorization.request`. */
export type AuthorizationDecision = { approved: true } | { approved: false; declineReason?: string };

/** A network token of one of your cards (docs/tokens.md). */
export type Token = Schemas['Token'];

/**
 * The `tokenization.request` the gateway POSTs to your decision endpoint once you enrol it for
 * tokenizations (`requestTypes`; docs/tokens.md, "Your decision endpoint and `tokenization.request`").
 * Written by hand: the OpenAPI document does not describe it.
 */
export interface TokenizationRequest {
  /** `treq_…`, a new one for each request; the same as `webhook-id`. */
  id: string;
  type: 'tokenization.request';
  createdAt: string;
  partnerId: string;
  data: {
    tokenization: {
      /** The processor's tokenization id: its retry carries the same one, and the gateway answers that from what it recorded, without asking you again. */
      id: string;
      /** The `_id` the token will have, whatever you answer (a decline makes a `declined` token). */
      tokenId: string;
      walletProvider: Token['walletProvider'];
      /** The network's id of the wallet or merchant that asks. */
      tokenRequestorId: string;
      /** The device, as the wallet described it (`{type: 'other'}` for a merchant). */
      device: Token['device'];
      /** What the network thinks of the request: it decides when you do not. */
      networkVerdict: {
        decision: 'approve' | 'require_verification' | 'decline';
        /** 1 (lowest risk) to 5. */
        riskScore?: number;
        /** The network's codes, each 1 to 40 of `A-Z 0-9 _`. */
        reasons?: string[];
      };
    };
    /** The card as events carry it: never a card number, CVV, PIN or the token's number. */
    card: Schemas['EventCardCreated']['data']['card'];
  };
}

/**
 * Your answer to a `tokenization.request`: approve (the token is `active`), require the
 * cardholder's one-time code (`pending_verification`; the event `token.verification_code` carries
 * it for you to deliver), or decline, with an optional reason kept in the decision's audit entry.
 */
export type TokenizationDecision = { decision: 'approve' } | { decision: 'require_verification' } | { decision: 'decline'; declineReason?: string };
