/**
 * The names the `local-handler` and `orchestrate` policies accept, without their implementations:
 * the policies' schemas (read by the boot guards) need the names only, and a refused configuration
 * exits without loading every handler. `gateway/handlers` maps each name to its factory (checked by
 * the compiler: `satisfies Record<...>`), in this order.
 */
export const LOCAL_HANDLER_NAMES = [
  'health-check',
  'openapi-document',
  'api-docs',
  'me',
  'list-individuals',
  'get-individual',
  'list-individual-cards',
  'list-individual-audit-logs',
  'list-individual-card-status-history',
  'list-cards',
  'set-card-nickname',
  'set-card-3ds-phone',
] as const;

export const ORCHESTRATION_NAMES = [
  'create-individual',
  'issue-virtual-card',
  'issue-physical-card',
  'list-individual-transactions',
  'lock-card',
  'unlock-card',
  'activate-card',
  'temporary-lock-card',
  'restrict-card',
  'restrict-card-lost',
  'restrict-card-stolen',
  'restrict-card-closed',
  'restrict-card-fraud',
  'restrict-card-mobile-lost',
  'set-card-emboss-name',
  'replace-card',
  'reissue-card',
  'set-card-3ds-answer',
  'reset-card-pin-tries',
  'change-card-pin',
  'force-card-pin-lock',
  'authorize-cardholder',
  'patch-card-limits',
  'set-card-limit',
] as const;

export type LocalHandlerName = (typeof LOCAL_HANDLER_NAMES)[number];
export type OrchestrationName = (typeof ORCHESTRATION_NAMES)[number];
