/** Finding severities, most severe first. */
export const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFO'] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * What a rule is and where its findings show:
 * - `severity`;
 * - `report`: listed by `npm run audit:policies` (and `auditGatewayConfig`). The boot's rules are
 *   not: they check the runtime's registries (loaded plugins, conditions, policy schemas), which the
 *   CLI does not load, or say in the boot's words a fact the report words its own way;
 * - `boot`: how the boot (and every reload) shows a CRITICAL finding when it refuses: `plain`
 *   (`where: message`), `tagged` (`where: message [policy audit: <rule>]`), or `never` when a boot
 *   rule already refuses the same fact in its own words (named in `sameFactAs`).
 */
export interface RuleSpec {
  severity: Severity;
  report: boolean;
  boot: 'plain' | 'tagged' | 'never';
  /** For `boot: 'never'`: the boot rule that refuses the same fact. */
  sameFactAs?: string;
}

const reported = (severity: Severity, boot: RuleSpec['boot'] = severity === 'CRITICAL' ? 'tagged' : 'never') => ({ severity, report: true, boot }) as const;
const bootOnly = { severity: 'CRITICAL', report: false, boot: 'plain' } as const;

/**
 * The one rule set over the route model (docs/policy-audit.md explains each): the policy audit's
 * rules, reported by `npm run audit:policies`, and the boot's own CRITICAL rules. A CRITICAL finding refuses the boot and every reload.
 */
export const AUDIT_RULES = {
  // The boot's rules (a CRITICAL finding refuses; not in the report).
  'plugin-load': bootOnly,
  'config-shape': bootOnly,
  'listener-section': bootOnly,
  'policy-whitelist': bootOnly,
  'policy-unknown': bootOnly,
  'action-params': bootOnly,
  'condition-unknown': bootOnly,
  'jwt-conditional': bootOnly,
  'jwt-first': bootOnly,
  'endpoint-unknown': bootOnly,
  'endpoint-unserved': bootOnly,
  'route-path': bootOnly,
  'catalog-contradiction': bootOnly,
  // The policy audit's rules.
  'jwt-missing': { ...reported('CRITICAL', 'never'), sameFactAs: 'jwt-first' },
  'jwt-not-first': { ...reported('CRITICAL', 'never'), sameFactAs: 'jwt-first' },
  'public-route-shape': reported('CRITICAL'),
  'proxy-path-contract': reported('CRITICAL'),
  'ownership-missing': reported('CRITICAL'),
  'expression-policy': reported('CRITICAL', 'plain'),
  'expression-condition': reported('CRITICAL', 'plain'),
  'body-rewriting-condition': reported('CRITICAL'),
  'secret-replay-store': reported('CRITICAL'),
  'stock-admin-api': reported('CRITICAL', 'plain'),
  'admin-api-exposed': reported('CRITICAL'),
  'admin-token-missing': reported('CRITICAL'),
  'validation-missing': reported('HIGH'),
  'sensitive-data-missing': reported('HIGH'),
  'builtin-policy': reported('HIGH'),
  'route-unauditable': reported('HIGH'),
  'rate-limit-missing': reported('MEDIUM'),
  'pipeline-ambiguous': reported('MEDIUM'),
  'route-unserved': reported('LOW'),
  'public-route': reported('INFO'),
} as const satisfies Record<string, RuleSpec>;
export type AuditRule = keyof typeof AUDIT_RULES;

/** One finding: its severity, rule, where in the configuration, and what is wrong. */
export interface AuditFinding {
  severity: Severity;
  rule: AuditRule;
  where: string;
  message: string;
}

/** A finding of `rule` (its severity from {@link AUDIT_RULES}). */
export function finding(rule: AuditRule, where: string, message: string): AuditFinding {
  return { severity: AUDIT_RULES[rule].severity, rule, where, message };
}

/** True for the rules `npm run audit:policies` lists. */
export function isReported(rule: AuditRule): boolean {
  return AUDIT_RULES[rule].report;
}

/**
 * The boot's text of a finding that refuses the configuration, as `{ where, message }`; undefined
 * for a finding that does not refuse (below CRITICAL, or refused in another rule's words).
 */
export function refusalOf(f: AuditFinding): { where: string; message: string } | undefined {
  const spec: RuleSpec = AUDIT_RULES[f.rule];
  if (f.severity !== 'CRITICAL' || spec.boot === 'never') return undefined;
  return { where: f.where, message: spec.boot === 'tagged' ? `${f.message} [policy audit: ${f.rule}]` : f.message };
}
