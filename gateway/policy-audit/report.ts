import { PUBLIC_ROUTE_RULE, SEVERITIES, type AuditedStep, type AuditFinding, type AuditResult, type Severity } from './audit';

/** Counts per severity, the most severe level found, and whether the audit passes (nothing HIGH or CRITICAL). */
export interface AuditSummary {
  routes: number;
  findings: Record<Severity, number>;
  highest: Severity | null;
  passed: boolean;
}

/** Severities that fail `npm run audit:policies` (exit 1). The gateway itself refuses only CRITICAL. */
export const FAILING_SEVERITIES: ReadonlySet<Severity> = new Set(['CRITICAL', 'HIGH']);

export function summarize(result: AuditResult): AuditSummary {
  const findings = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
  for (const f of result.findings) findings[f.severity] += 1;
  const highest = SEVERITIES.find((s) => findings[s] > 0) ?? null;
  return { routes: result.routes.length, findings, highest, passed: !result.findings.some((f) => FAILING_SEVERITIES.has(f.severity)) };
}

/** The `--json` document: `{ routes, findings, summary, publicRouteRule }` (the rule in words, as the text report prints it). */
export function auditReport(result: AuditResult): AuditResult & { summary: AuditSummary; publicRouteRule: string } {
  return { routes: result.routes, findings: result.findings, summary: summarize(result), publicRouteRule: PUBLIC_ROUTE_RULE };
}

function line(f: AuditFinding): string {
  return `    ${f.severity.padEnd(8)} ${f.rule}: ${f.message}`;
}

/** A param value as the YAML would write it: a string bare, anything else as JSON. */
function paramText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** One line per action of each step: the policy, its effective params, and where they come from. */
function stepLines(steps: readonly AuditedStep[]): string[] {
  const width = Math.max(0, ...steps.map((s) => s.policy.length));
  return steps.flatMap((step) =>
    step.actions.map((action) => {
      const entries = Object.entries(action.params);
      const params = entries.length === 0 ? '(no params)' : `{ ${entries.map(([k, v]) => `${k}: ${paramText(v)}`).join(', ')} }`;
      const notes = [
        ...(action.condition !== undefined ? [`only under condition ${action.condition}`] : []),
        ...(action.fromCatalog ? ['the catalog\'s'] : []),
        ...(action.timeoutFrom ? [`upstream timeout: ${action.timeoutFrom}`] : []),
      ];
      return `      ${step.policy.padEnd(width)}  ${params}${notes.length > 0 ? `  (${notes.join('; ')})` : ''}`;
    })
  );
}

/**
 * The human report: each route with its methods, paths, pipeline and policy chain (`(public)` for a
 * public route), each step with its effective params (marked `the catalog's` when they are those
 * the operation's catalog entry implies, written or not), then its findings; then the findings
 * about the whole configuration; then the public route rule; then the counts.
 */
export function formatAuditText(result: AuditResult): string {
  const out: string[] = [];
  const placed = new Set<AuditFinding>();
  for (const route of result.routes) {
    out.push(`${route.methods.join(',')} ${route.paths.join(', ')}  [${route.name}${route.pipeline ? ` → pipeline ${route.pipeline}` : ''}]${route.public ? '  (public)' : ''}${route.sandbox ? `  (sandbox only: ${route.sandbox === 'on' ? 'on' : 'off, answers 404'})` : ''}`);
    out.push(`    ${route.policies.length > 0 ? route.policies.join(' → ') : '(no pipeline)'}`);
    out.push(...stepLines(route.steps));
    const prefix = `apiEndpoint "${route.name}"`;
    const pipelinePrefix = route.pipeline === null ? undefined : `pipeline "${route.pipeline}"`;
    for (const f of result.findings) {
      if (f.where === prefix || f.where.startsWith(`${prefix} `) || (pipelinePrefix !== undefined && f.where.startsWith(pipelinePrefix))) {
        out.push(line(f));
        placed.add(f);
      }
    }
  }
  const rest = result.findings.filter((f) => !placed.has(f));
  if (rest.length > 0) {
    out.push('', 'Configuration:');
    for (const f of rest) out.push(`    ${f.severity.padEnd(8)} ${f.rule} (${f.where}): ${f.message}`);
  }
  out.push('', PUBLIC_ROUTE_RULE);
  const summary = summarize(result);
  out.push(
    '',
    `${summary.routes} routes; ${SEVERITIES.map((s) => `${summary.findings[s]} ${s}`).join(', ')}: ${summary.passed ? 'PASS' : 'FAIL (HIGH or CRITICAL findings)'}`
  );
  return `${out.join('\n')}\n`;
}
