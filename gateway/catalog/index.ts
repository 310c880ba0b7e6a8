import type { CardStatus } from '../cards/card-status';
import type { StatusChange } from '../cards/transitions';
import type { Operation } from './operation';
import { OPERATIONS } from './operations';

/**
 * The operation catalog: each partner operation declared once (gateway/catalog/operations.ts). It
 * holds data only, no implementation: the boot guards, the policy audit and the OpenAPI document
 * read it without loading a handler; the `operation` policy resolves the name of a pipeline's step
 * here once, and ends in the handler registered against that key (gateway/handlers, typed by the
 * entry), or the proxy for an upstream call. What an operation does beyond that (the status change
 * it makes) the entry references directly.
 */
export { OPERATIONS } from './operations';
export { PARTNER_BASE_PATH, TAGS, type Ending, type Operation, type OwnershipCheck, type ProxiedUpstream, type SuccessAnswer, type TagName } from './operation';

/** The name of an operation: its apiEndpoint, its pipeline, its operationId. */
export type OperationName = keyof typeof OPERATIONS;

/** The operations a handler of the gateway ends (locally or by orchestration), by name. */
export type HandledOperationName = {
  [Name in OperationName]: (typeof OPERATIONS)[Name]['ends']['kind'] extends 'upstream' ? never : Name;
}[OperationName];

/** Every operation name, in the catalog's order. */
export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

/** The catalog entry of a name; undefined for a name the catalog does not have. */
export function operationNamed(name: unknown): Operation | undefined {
  return typeof name === 'string' && Object.hasOwn(OPERATIONS, name) ? (OPERATIONS as Record<string, Operation>)[name] : undefined;
}

/** The public operations (served without a token in their exact shape), by their full path. */
export const PUBLIC_OPERATIONS: ReadonlyMap<string, { name: OperationName; rateLimited: boolean }> = new Map(
  OPERATION_NAMES.flatMap((name) => {
    const operation: Operation = OPERATIONS[name];
    return operation.public ? [[operation.path, { name, rateLimited: operation.public.rateLimited }] as const] : [];
  })
);

/** An operation that changes a card's status: its entry references the change (`statusChange`) and names its audit action. */
export type StatusChangeOperation = Operation & { statusChange: StatusChange; audit: string };

/** The name of an operation that changes a card's status. */
export type StatusChangeOperationName = {
  [Name in OperationName]: (typeof OPERATIONS)[Name] extends StatusChangeOperation ? Name : never;
}[OperationName];

/**
 * The statuses an operator sets (`POST /admin/cards/{cardKey}/status`, docs/admin-api.md), each
 * made as the partner operation named here makes it (its entry's `statusChange` and audit action),
 * so that both check the same transitions and send the issuer the same action: unlock, lock, block
 * (RESTRICTED, which can be lifted, or FRAUD, which cannot) and close. The holder's own acts stay
 * the partner's: activating a card in hand, a temporary lock, reporting it lost, stolen or
 * mobile-lost (docs/decisions.md).
 */
export const OPERATOR_STATUS_CHANGES = {
  ACTIVE: 'unlock-card',
  LOCKED: 'lock-card',
  RESTRICTED: 'restrict-card',
  FRAUD: 'restrict-card-fraud',
  CLOSED: 'restrict-card-closed',
} as const satisfies Partial<Record<CardStatus, StatusChangeOperationName>>;

/** A status an operator may set. */
export type OperatorStatus = keyof typeof OPERATOR_STATUS_CHANGES;

/** The partner operation an operator's status is made as: its entry, with its status change and audit action. */
export function operatorStatusChange(status: OperatorStatus): StatusChangeOperation {
  return OPERATIONS[OPERATOR_STATUS_CHANGES[status]];
}
