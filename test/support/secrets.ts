import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The secrets a test run handled, and the scan that proves none of them reached a gateway log.
 *
 * Helpers that make or read secrets record them here (`recordSecret`): partner tokens
 * (test/support/partners.ts), passport numbers (`individualBody`), PANs, CVVs and 3DS answers read
 * from the issuer sandbox's control routes (`sandboxControl`), PIN blocks, securityKeys and 3DS
 * answers where tests build them. Every gateway process started by test/support/gateway-process.ts
 * appends its output to `test-output/<run>/gateway-N.log`; the root `afterAll` hook of
 * test/setup.ts scans those files and fails the run on any hit. The soak (scripts/soak.ts) uses the
 * same scanner on its own gateway log.
 *
 * How values are searched (documented in docs/reliability.md):
 * - each value as sent, URL-encoded (`encodeURIComponent` and form encoding) and JSON-escaped;
 * - values shorter than {@link MIN_SECRET_LENGTH} characters would be found by chance (ports,
 *   latencies, counts), so they are not searched on their own; a CVV (3 or 4 digits) is searched
 *   only as the value of a `cvv`/`cvv2`/`cvc`/`securityCode` key (`"cvv":"123"`, `cvv=123`);
 * - a hit is reported by kind and file only: the secret itself is never printed.
 */

/** What a recorded secret is. */
export type SecretKind =
  | 'pan'
  | 'cvv'
  | 'pinBlock'
  | 'securityKey'
  | 'jwt'
  | 'passportNumber'
  | 'threeDsAnswer'
  /** The RSA-OAEP ciphertext of a PAN or CVV the gateway passed through. */
  | 'cardCiphertext'
  | 'webhookSecret'
  /** A key webhook secrets are encrypted under at rest (`WEBHOOKS_SECRET_KEY`, docs/webhooks.md), or a refused value of it. */
  | 'webhookSecretKey'
  /** A secret an upstream signs its notifications to the gateway with (docs/upstreams.md). */
  | 'notifySecret';

/** Values shorter than this are searched only in a key context (CVVs) or not at all. */
export const MIN_SECRET_LENGTH = 6;

const registry = new Map<string, SecretKind>();

/**
 * Records a secret the run used; every gateway log of the run is searched for it at the end.
 * Ignores anything that is not a non-empty string.
 *
 * @example recordSecret('passportNumber', body.passportNumber)
 */
export function recordSecret(kind: SecretKind, value: unknown): void {
  if (typeof value !== 'string' || value === '') return;
  // The first kind wins: a value recorded twice keeps one entry.
  if (registry.has(value)) return;
  registry.set(value, kind);
  // Test files may run in mocha's parallel workers: each process also appends what it records to
  // the run's output directory, where the scan at the end of the run (test/setup.ts) reads it.
  fs.appendFileSync(path.join(runOutputDir(), `secrets-${process.pid}.jsonl`), `${JSON.stringify([value, kind])}\n`);
}

/** The secrets recorded so far by every process of the run, as `[value, kind]` pairs. */
export function recordedSecrets(): [string, SecretKind][] {
  const all = new Map(registry);
  const dir = process.env.TEST_OUTPUT_DIR;
  if (dir && fs.existsSync(dir)) {
    for (const name of fs.readdirSync(dir).filter((n) => /^secrets-\d+\.jsonl$/.test(n))) {
      for (const line of fs.readFileSync(path.join(dir, name), 'utf8').split('\n')) {
        if (!line) continue;
        const [value, kind] = JSON.parse(line) as [string, SecretKind];
        if (!all.has(value)) all.set(value, kind);
      }
    }
  }
  return [...all.entries()];
}

/** How many secrets of each kind were recorded. */
export function secretCounts(secrets: Iterable<[string, SecretKind]> = registry.entries()): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [, kind] of secrets) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

const ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * The directory this run's gateway logs go to: `TEST_OUTPUT_DIR` when set, else
 * `test-output/<time>-<pid>` (gitignored), created on first use and then kept in
 * `TEST_OUTPUT_DIR` so that every helper of the run agrees.
 */
export function runOutputDir(): string {
  if (!process.env.TEST_OUTPUT_DIR) {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    process.env.TEST_OUTPUT_DIR = path.join(ROOT, 'test-output', `${stamp}-${process.pid}`);
  }
  fs.mkdirSync(process.env.TEST_OUTPUT_DIR, { recursive: true });
  return process.env.TEST_OUTPUT_DIR;
}

let gatewayLogs = 0;

/** A fresh `gateway-<pid>-N.log` path in the run's output directory (unique across parallel workers). */
export function nextGatewayLogPath(): string {
  gatewayLogs += 1;
  return path.join(runOutputDir(), `gateway-${process.pid}-${gatewayLogs}.log`);
}

/** The gateway logs written so far in the run's output directory. */
export function runGatewayLogs(): string[] {
  const dir = process.env.TEST_OUTPUT_DIR;
  if (!dir || !fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.log'))
    .map((name) => path.join(dir, name));
}

/** One secret found in one log file: kind and file only, never the value. */
export interface SecretHit {
  kind: SecretKind;
  file: string;
  /** A stable, non-reversible reference to the value (first 8 hex chars of its SHA-256). */
  fingerprint: string;
}

/** What a scan looked at and found. */
export interface ScanResult {
  files: number;
  bytes: number;
  /** Distinct secrets searched for, by kind. */
  searched: Record<string, number>;
  /** Values too short to search for on their own (and not CVVs), by kind. */
  skipped: Record<string, number>;
  hits: SecretHit[];
}

/** The forms a value can take in a log line: raw, URL-encoded, form-encoded, JSON-escaped. */
function variantsOf(value: string): string[] {
  const forms = new Set([value, encodeURIComponent(value), new URLSearchParams({ k: value }).toString().slice(2), JSON.stringify(value).slice(1, -1)]);
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

const CVV_CONTEXT = /(?:cvv2?|cvc|securityCode)\\?"?\s*[:=]\s*\\?"?(\d{3,4})(?!\d)/gi;

/**
 * Searches `files` for every secret in `secrets`.
 *
 * One pass per file: a window of {@link MIN_SECRET_LENGTH} characters slides over the text and is
 * looked up among the last characters of every searched form; a candidate is then compared in
 * full. CVVs are matched by a regular expression on key/value contexts.
 */
export function scanForSecrets(files: string[], secrets: Iterable<[string, SecretKind]> = registry.entries()): ScanResult {
  const W = MIN_SECRET_LENGTH;
  const byTail = new Map<string, { form: string; kind: SecretKind; value: string }[]>();
  const cvvs = new Map<string, string>();
  const searched: Record<string, number> = {};
  const skipped: Record<string, number> = {};
  for (const [value, kind] of secrets) {
    if (kind === 'cvv' && /^\d{3,4}$/.test(value)) {
      cvvs.set(value, value);
      searched.cvv = (searched.cvv ?? 0) + 1;
      continue;
    }
    if (value.length < W) {
      skipped[kind] = (skipped[kind] ?? 0) + 1;
      continue;
    }
    searched[kind] = (searched[kind] ?? 0) + 1;
    for (const form of variantsOf(value)) {
      const tail = form.slice(-W);
      const list = byTail.get(tail) ?? [];
      list.push({ form, kind, value });
      byTail.set(tail, list);
    }
  }

  const hits: SecretHit[] = [];
  const seen = new Set<string>();
  const hit = (kind: SecretKind, file: string, value: string) => {
    const fingerprint = crypto.createHash('sha256').update(value).digest('hex').slice(0, 8);
    const key = `${file}\0${fingerprint}`;
    if (seen.has(key)) return;
    seen.add(key);
    hits.push({ kind, file: path.basename(file), fingerprint });
  };
  let bytes = 0;
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    bytes += Buffer.byteLength(text);
    for (let end = W; end <= text.length; end++) {
      const candidates = byTail.get(text.slice(end - W, end));
      if (candidates === undefined) continue;
      for (const { form, kind, value } of candidates) {
        if (end >= form.length && text.startsWith(form, end - form.length)) hit(kind, file, value);
      }
    }
    if (cvvs.size > 0) {
      for (const match of text.matchAll(CVV_CONTEXT)) {
        if (cvvs.has(match[1])) hit('cvv', file, match[1]);
      }
    }
  }
  return { files: files.length, bytes, searched, skipped, hits };
}

/**
 * `text` with every recorded secret (and its URL-encoded forms) replaced by `<kind>`: for failure
 * messages that quote requests.
 */
export function redactRecordedSecrets(text: string): string {
  let out = text;
  for (const [value, kind] of registry) {
    if (value.length < MIN_SECRET_LENGTH) continue;
    for (const form of variantsOf(value)) if (out.includes(form)) out = out.split(form).join(`<${kind}>`);
  }
  return out;
}

/** A one-line description of the hits, by kind and file, without any secret value. */
export function describeHits(hits: SecretHit[]): string {
  const byKind: Record<string, number> = {};
  for (const h of hits) byKind[h.kind] = (byKind[h.kind] ?? 0) + 1;
  const kinds = Object.entries(byKind)
    .map(([kind, n]) => `${kind}×${n}`)
    .join(', ');
  const where = [...new Set(hits.map((h) => h.file))].join(', ');
  return `${hits.length} secret(s) found in gateway logs: ${kinds} (in ${where}; fingerprints ${hits.map((h) => h.fingerprint).join(' ')})`;
}
