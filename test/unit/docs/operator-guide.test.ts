import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { METRIC_NAMES } from '../../../gateway/metrics';
import { POLICIES } from '../../../policies';
import { OPERATOR_GUIDE, policyReference, REFERENCE_END, REFERENCE_START, withReference } from '../../../scripts/policy-reference';
import { configEnvNames, ROOT, settingsEnvNames } from '../deploy/settings-env';

const REGENERATE = 'run `npm run build && node dist/scripts/policy-reference.js --write`';

/** The lines of a Markdown section, from its heading to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.replace(/^#+\s*/, '') === heading && l.startsWith('#'));
  if (start < 0) throw new Error(`no section "${heading}"`);
  const level = /^#+/.exec(lines[start])![0].length;
  const end = lines.findIndex((l, i) => i > start && /^#+\s/.test(l) && /^#+/.exec(l)![0].length <= level);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** First-column names of a Markdown table: `| \`NAME\` | ...`. */
function tableNames(markdown: string): string[] {
  return [...markdown.matchAll(/^\| `([^`]+)` \|/gm)].map(([, name]) => name);
}

describe('unit: docs/operator-guide.md and docs/operations.md stay true to the code', function () {
  const guide = fs.readFileSync(OPERATOR_GUIDE, 'utf8');
  const operations = fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');

  it('lists every parameter of every policy, and no parameter that no longer exists', function () {
    const reference = guide.slice(guide.indexOf(REFERENCE_START), guide.indexOf(REFERENCE_END));
    const documented = new Map<string, string[]>();
    for (const block of reference.split(/^#### /m).slice(1)) {
      const name = /^`([^`]+)`/.exec(block)![1];
      documented.set(name, tableNames(block));
    }
    for (const { name, schema } of POLICIES) {
      expect(documented.has(name), `policy ${name} is documented (${REGENERATE})`).to.equal(true);
      expect(documented.get(name), `parameters of ${name} (${REGENERATE})`).to.deep.equal(Object.keys(schema.properties));
    }
    expect([...documented.keys()], `no documented policy is gone (${REGENERATE})`).to.deep.equal(POLICIES.map((p) => p.name));
  });

  it('has the reference exactly as scripts/policy-reference.ts generates it (types, defaults, descriptions)', function () {
    expect(withReference(guide, policyReference()) === guide, `the generated policy reference is out of date: ${REGENERATE}`).to.equal(true);
  });

  it('documents every environment variable the gateway reads (settings.ts and gateway.config.yml), and only those', function () {
    const table = tableNames(section(guide, 'Environment variables'));
    const read = new Set([...settingsEnvNames(), ...configEnvNames()]);
    for (const name of read) expect(table, `${name} is in the environment variable table`).to.include(name);
    for (const name of table) expect(read.has(name), `${name} is still read by the gateway`).to.equal(true);
  });

  it('operations.md describes every gateway metric', function () {
    const metrics = section(operations, 'Metrics');
    for (const name of Object.values(METRIC_NAMES)) expect(metrics, name).to.contain(`\`${name}\``);
  });

  it('links only to documents that exist (policy-audit.md excepted: written with the policy audit)', function () {
    const pending = new Set(['policy-audit.md']);
    for (const [file, text] of [['operator-guide.md', guide], ['operations.md', operations]] as const) {
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+\.md)(#[^)]*)?\)/g)) {
        if (pending.has(target)) continue;
        expect(fs.existsSync(path.join(ROOT, 'docs', target)), `${file} → ${target}`).to.equal(true);
      }
    }
  });
});
