import type { Operation } from './operation';
import { OPERATIONS } from './operations';

/**
 * The operation catalog: each partner operation declared once (gateway/catalog/operations.ts). It
 * holds data only, no implementation: the boot guards, the policy audit and the OpenAPI document
 * read it without loading a handler; the `operation` policy looks the implementation up when a
 * pipeline is built (gateway/handlers, or the proxy for an upstream call).
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
