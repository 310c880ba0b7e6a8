import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { checkSync, type Diagnostics } from 'recheck';
// TypeScript 7 (the compiler of the build) ships no JavaScript API: its parser comes from typescript 5, aliased.
import ts from 'typescript-parser-5';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const SCANNED = ['gateway', 'policies', 'plugins'];

/** A regular expression found in the source: a literal, a schema `pattern`, or a `*_PATTERN` string. */
interface FoundPattern {
  file: string;
  line: number;
  source: string;
  flags: string;
}

/**
 * Patterns that only ever see operator configuration (gateway.config.yml, environment variables),
 * read at boot or on an admin reload, never request data. Each must still be in its file: a stale
 * entry fails the test. Anything else, in any file under gateway/ and policies/, must be proven linear.
 */
const CONFIG_ONLY: readonly { file: string; source: string; reason: string }[] = [
  {
    file: 'gateway/runtime/env-substitution.ts',
    source: '\\$?\\$\\{([A-Za-z0-9_]+)(:-(.*?))?\\}',
    reason: "express-gateway's own ${VAR:-default} pattern, kept verbatim so that substitution behaves the same; runs on the config file",
  },
  { file: 'gateway/policy-audit/route-facts.ts', source: '\\{[^}/]+\\}', reason: 'route paths of the config under audit' },
  { file: 'gateway/settings.ts', source: '\\/+$', reason: 'an upstream URL from the environment' },
  { file: 'gateway/upstreams/http-client.ts', source: '\\/+$', reason: 'the configured upstream base path' },
];

/**
 * RegExps built at run time from operator configuration, each named by its file and the source
 * text of its argument; like CONFIG_ONLY, an entry that no longer matches its file fails the test.
 */
const COMPUTED_CONFIG_ONLY: readonly { file: string; argument: string; reason: string }[] = [
  {
    file: 'gateway/policy-audit/audit.ts',
    argument: 'entry.pathRegex',
    reason: "an apiEndpoint's pathRegex from the config under audit, matched against the three public paths only (as express-gateway would mount it)",
  },
  {
    file: 'gateway/runtime/compiled-dispatch.ts',
    argument: 'source',
    reason: "an apiEndpoint's host (escaped, each * one label [^.]+: linear) or hostRegex (the operator's own pattern), matched against the Host header's name as express-gateway's vhost matched it before; the shipped configuration has neither",
  },
];
const computedSeen = new Set<string>();

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/**
 * Every regular expression in the TypeScript sources, read with the compiler's parser: regex
 * literals, string `pattern` properties (JSON schemas: AJV compiles them with the `u` flag) and
 * string constants named `…PATTERN`. What cannot be analysed (a `new RegExp` of a computed string, a
 * `pattern` that is neither a string, a `…PATTERN` constant nor a literal's `.source`) is returned
 * as a problem, so that no pattern escapes the check by the way it is written.
 */
function findPatterns(): { patterns: FoundPattern[]; problems: string[] } {
  const patterns: FoundPattern[] = [];
  const problems: string[] = [];
  for (const file of SCANNED.flatMap((dir) => sourceFiles(path.join(ROOT, dir)))) {
    const relative = path.relative(ROOT, file).split(path.sep).join('/');
    const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const where = (node: ts.Node) => ({ file: relative, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1 });
    const visit = (node: ts.Node): void => {
      if (ts.isRegularExpressionLiteral(node)) {
        const slash = node.text.lastIndexOf('/');
        patterns.push({ ...where(node), source: node.text.slice(1, slash), flags: node.text.slice(slash + 1) });
      } else if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') {
        const [first, second] = node.arguments ?? [];
        if (first && ts.isStringLiteralLike(first) && (!second || ts.isStringLiteralLike(second))) {
          patterns.push({ ...where(node), source: first.text, flags: second ? second.text : '' });
        } else {
          const at = where(node);
          const exempt = COMPUTED_CONFIG_ONLY.find((e) => e.file === at.file && first?.getText(sf) === e.argument);
          if (exempt) computedSeen.add(`${exempt.file} ${exempt.argument}`);
          else problems.push(`${at.file}:${at.line}: a RegExp built from a computed string cannot be analysed`);
        }
      } else if (ts.isPropertyAssignment(node) && node.name.getText(sf) === 'pattern') {
        const value = node.initializer;
        if (ts.isStringLiteralLike(value)) patterns.push({ ...where(node), source: value.text, flags: 'u' });
        else if (!(ts.isIdentifier(value) && value.text.endsWith('PATTERN')) && !(ts.isPropertyAccessExpression(value) && value.name.text === 'source')) {
          const at = where(node);
          problems.push(`${at.file}:${at.line}: a schema pattern that is neither a string, a …PATTERN constant nor a regex literal's .source`);
        }
      } else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text.endsWith('PATTERN') && node.initializer && ts.isStringLiteralLike(node.initializer)) {
        patterns.push({ ...where(node), source: node.initializer.text, flags: 'u' });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { patterns, problems };
}

/**
 * recheck's automata-theoretic checker: a proof over every input, not a sample of timings. Bounded
 * repetitions such as {1,255} are expanded rather than handed to the fuzzer, and nothing is cut off
 * by time, so the verdict is the same on a loaded machine.
 */
function analyse(pattern: FoundPattern): Diagnostics {
  return checkSync(pattern.source, pattern.flags.replace(/[gy]/g, ''), {
    checker: 'automaton',
    maxRepeatCount: 100_000,
    maxNFASize: 10_000_000,
    maxPatternSize: 100_000,
    timeout: null,
  });
}

describe('unit: every regular expression under gateway/ and policies/ runs in linear time', function () {
  this.timeout(120_000);
  const { patterns, problems } = findPatterns();

  it('finds the patterns that run on request data, and none that it cannot analyse', function () {
    expect(problems).to.deep.equal([]);
    const sources = patterns.map((p) => `${p.file} ${p.source}`);
    // A sample of the request path, so that a broken scan cannot pass by finding nothing.
    expect(sources).to.include('gateway/logging/redaction.ts [A-Za-z0-9_.-]+');
    expect(sources).to.include('gateway/logging/redaction.ts \\b[2-6](?:[ -]?\\d){12,18}\\b');
    expect(sources).to.include('gateway/http/request-context.ts ^[A-Za-z0-9._:-]{1,128}$');
    expect(sources).to.include('gateway/validation/keywords.ts ^[A-Za-z0-9+/]+={0,2}$');
    expect(sources).to.include('gateway/schemas/cards.ts ^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$');
    expect(patterns.length).to.be.greaterThan(50);
  });

  it('lists as configuration-only exactly the computed RegExps that are still in their files', function () {
    for (const entry of COMPUTED_CONFIG_ONLY) expect(computedSeen.has(`${entry.file} ${entry.argument}`), `${entry.file}: ${entry.argument}`).to.equal(true);
  });

  it('lists as configuration-only exactly patterns that are still in their files', function () {
    for (const entry of CONFIG_ONLY) {
      expect(
        patterns.some((p) => p.file === entry.file && p.source === entry.source),
        `${entry.file} no longer has /${entry.source}/: remove it from CONFIG_ONLY`
      ).to.equal(true);
    }
  });

  it('proves every other pattern safe with the recheck ReDoS analyser', function () {
    const unsafe: string[] = [];
    for (const pattern of patterns) {
      if (CONFIG_ONLY.some((entry) => entry.file === pattern.file && entry.source === pattern.source)) continue;
      const result = analyse(pattern);
      if (result.status === 'safe') continue;
      const why =
        result.status === 'vulnerable'
          ? `${result.complexity.summary}, attack ${JSON.stringify(result.attack.pattern)}`
          : `not provable (${result.error.kind}${'message' in result.error ? `: ${result.error.message}` : ''})`;
      unsafe.push(`${pattern.file}:${pattern.line} /${pattern.source}/${pattern.flags}: ${why}`);
    }
    expect(unsafe, unsafe.join('\n')).to.deep.equal([]);
  });
});
