import type { AuthorizationEndpointChange, DefaultDecision } from '../authorizations/endpoint-store';
import type { SpendControls } from '../authorizations/spend-controls';
import type { CardStatus } from '../cards/card-status';
import type { CardIssueBody } from '../schemas/card-issue';
import type { IndividualCreateBody } from '../schemas/individual-create';
import type { SchemaName } from '../schemas';
import type { LimitName, SimulatedAuthorization, SimulatedTransactionRequest } from '../upstreams/types';

/** A card status change's body (`card-status-change`, `card-restrict`): sent on to the issuer as it is. */
export interface CardStatusChangeBody {
  expDate?: string;
  reason?: string;
  description?: string;
  cardLocation?: string;
}

/** A replacement's or re-issue's body (`card-replace`). */
export interface CardReplaceBody {
  expDate: string;
  reason?: string;
  pinMailer?: string;
}

/** One limit as `limit-set` and each item of `limits-patch` validate it. */
export interface LimitBody {
  name: LimitName;
  value: number;
}

/**
 * The TypeScript type of the body each request schema of gateway/schemas validates, as the
 * handlers read it: the handler context's `body` of an entry with that body schema
 * (gateway/handlers/context.ts). A schema not listed gives `unknown` (no handler reads it: the
 * fee checks end in the proxy). Kept beside the schemas' own names: a key that is not one does not
 * compile (`BodySchemaName`).
 */
export interface RequestBodies {
  'individual-create': IndividualCreateBody;
  'card-issue': CardIssueBody;
  'card-status-change': CardStatusChangeBody;
  'card-restrict': CardStatusChangeBody;
  'card-nickname': { nickname: string };
  'three-ds-phone': { phoneNumber: string };
  'card-emboss-name': { embossedName: string };
  'card-replace': CardReplaceBody;
  'three-ds-answer': { answer: string };
  'card-authorize': { pin: string };
  'pin-change': { expDate: string; pin: string };
  'pin-force-lock': { expDate: string };
  'empty-body': Record<string, never>;
  'limits-patch': LimitBody[];
  'limit-set': LimitBody;
  'spend-controls': SpendControls;
  'webhook-endpoint-create': { url: string; events?: string[]; description?: string };
  'webhook-endpoint-update': { url?: string; events?: string[]; description?: string; status?: 'enabled' | 'disabled' };
  'authorization-endpoint-create': { url: string; timeoutMs?: number; defaultDecision?: DefaultDecision };
  'authorization-endpoint-update': AuthorizationEndpointChange;
  'simulate-transaction': Omit<SimulatedTransactionRequest, 'cardId' | 'notify'>;
  'simulate-authorization': Omit<SimulatedAuthorization, 'cardId' | 'notify'>;
  'simulate-transaction-step': { amount?: number };
  'simulate-issuer-status': { status: CardStatus; reason?: string };
}

type OneOf<Name extends SchemaName> = Name;
/** The body schemas typed here: each is a name of gateway/schemas. */
export type BodySchemaName = OneOf<keyof RequestBodies>;

/** The validated body of a schema, typed. */
export type BodyOf<Schema> = Schema extends keyof RequestBodies ? RequestBodies[Schema] : unknown;
