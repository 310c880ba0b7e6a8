/**
 * The policy audit (docs/policy-audit.md): every route's chain of policies and the security
 * findings on it, over the route model (gateway/route-model). One rule set: the boot and every
 * reload run all of it (`checkGatewayConfig`: CRITICAL refuses), `npm run audit:policies` prints the
 * rules it reports (HIGH or CRITICAL fails).
 */
export { auditGatewayConfig, auditRouteModel, isLoopbackHost, publicShapeText, PUBLIC_ROUTE_RULE } from './audit';
export type { AuditInput, AuditResult, AuditedAction, AuditedRoute, AuditedStep } from './audit';
export { AUDIT_RULES, SEVERITIES, refusalOf, type AuditFinding, type AuditRule, type RuleSpec, type Severity } from './rules';
export { ALLOWED_BUILTIN_POLICIES, contradictionsWithCatalog, type BootInput, type RuntimeFacts } from './boot-rules';
export { auditReport, formatAuditText, summarize, FAILING_SEVERITIES, type AuditSummary } from './report';
export { PARTNER_BASE_PATH, PUBLIC_ROUTE_PATHS, PUBLIC_ROUTES, POLICY, PLUGIN_POLICY_NAMES, BUILTIN_POLICIES, UPSTREAM_CONTRACT_PATHS } from './route-facts';
