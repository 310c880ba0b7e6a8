/**
 * The policy audit (docs/policy-audit.md): every route's chain of policies and the security
 * findings on it. Run at boot and on reload by `checkGatewayConfig` (CRITICAL refuses), and by
 * `npm run audit:policies` (HIGH or CRITICAL fails).
 */
export { auditGatewayConfig, isLoopbackHost, publicShapeText, AUDIT_RULES, PUBLIC_ROUTE_RULE, SEVERITIES } from './audit';
export type { AuditFinding, AuditInput, AuditResult, AuditRule, AuditedRoute, Severity } from './audit';
export { readGatewayConfigFile, substituteEnv } from './config-file';
export { auditReport, formatAuditText, summarize, FAILING_SEVERITIES, type AuditSummary } from './report';
export { PARTNER_BASE_PATH, PUBLIC_ROUTE_PATHS, PUBLIC_ROUTES, POLICY, PLUGIN_POLICY_NAMES, BUILTIN_POLICIES, UPSTREAM_CONTRACT_PATHS } from './route-facts';
