/**
 * Operator CLI over the admin API (`npm run -s partners -- <verb> ...`):
 *
 *   keygen --out DIR                                      make a P-521 key pair (partner side)
 *   add --name NAME --issuer URL --public-key FILE [--kid KID]
 *   list | show ID
 *   add-key ID --public-key FILE [--kid KID]              rotation
 *   revoke-key ID KID                                     revocation
 *   disable ID | enable ID
 *   add-tenant ID --name NAME                             a B2B tenant
 *   card-status CARDKEY --status STATUS --reason TEXT [--idempotency-key KEY]
 *                                                         an operator's lock, unlock, block or close
 *
 * `--print FIELD` prints one field of the answer as plain text (`--print id` for a partner's
 * `_id`), so that a shell can capture it; otherwise the answer is printed as JSON.
 * The admin URL defaults to http://ADMIN_HOST:ADMIN_PORT (127.0.0.1:9876); the token is ADMIN_TOKEN
 * or, when unset, the one the gateway generated in DATA_DIR/admin-token.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ADMIN_TOKEN_FILE } from '../gateway/admin/admin-token';
import { projectRoot } from '../gateway/settings';

const USAGE = `usage: npm run -s partners -- <verb> [options]
  keygen --out DIR
  add --name NAME --issuer URL --public-key FILE [--kid KID]
  list
  show ID
  add-key ID --public-key FILE [--kid KID]
  revoke-key ID KID          (a KID starting with -- goes after --: revoke-key ID -- --KID)
  disable ID
  enable ID
  add-tenant ID --name NAME
  card-status CARDKEY --status STATUS --reason TEXT [--idempotency-key KEY]
      set a card's status as the operator: STATUS is active (unlock), locked, restricted or
      fraud (block), closed (final); case-insensitive. TEXT (1..500 characters) is recorded in the
      card's history and sent to the partner in its card.status_changed event. Retried on a lost
      connection, a 5xx or a request still running, with the same Idempotency-Key (a new one per
      run unless given): the issuer applies the change once.
options:
  --admin-url URL   default http://$ADMIN_HOST:$ADMIN_PORT (127.0.0.1:9876)
  --token TOKEN     default $ADMIN_TOKEN, else the token the gateway generated in $DATA_DIR/admin-token
  --print FIELD     print one field of the answer as plain text (e.g. --print id) instead of JSON
  --help            this text
`;

class UsageError extends Error {}

function adminToken(explicit: string | undefined): string {
  if (explicit) return explicit;
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = path.join(path.resolve(process.env.DATA_DIR || path.join(projectRoot, '.data')), ADMIN_TOKEN_FILE);
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    throw new UsageError(`no admin token: set ADMIN_TOKEN or start the gateway once so that it writes ${file}`);
  }
}

async function call(baseUrl: string, token: string, method: string, urlPath: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${baseUrl}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const problem = parsed as { detail?: string; invalidParams?: { name: string; reason: string }[] } | null;
    const params = problem?.invalidParams?.map((p) => `${p.name} ${p.reason}`).join('; ');
    throw new Error(`${method} ${urlPath} → ${response.status}: ${problem?.detail ?? text}${params ? ` (${params})` : ''}`);
  }
  return parsed;
}

/** Attempts of a `card-status` call: the first and two retries. */
const CARD_STATUS_ATTEMPTS = 3;

/** Whether a failed attempt may be retried with the same key: no answer at all, a 5xx, or the key's first request still running. */
function retryable(failure: { status?: number; code?: string }): boolean {
  return failure.status === undefined || failure.status >= 500 || failure.code === 'idempotency_in_progress';
}

/**
 * POSTs `body` with `Idempotency-Key: key`, retrying (at most {@link CARD_STATUS_ATTEMPTS} attempts,
 * after the answer's Retry-After or 1 s) what {@link retryable} allows. Every attempt carries the
 * same key, so the gateway sends the issuer the same operation id and the change is made once.
 * A final failure names the key, to retry by hand with `--idempotency-key`.
 */
async function callWithRetries(baseUrl: string, token: string, urlPath: string, body: unknown, key: string): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    let failure: { status?: number; code?: string; text: string; retryAfter?: string };
    try {
      const response = await fetch(`${baseUrl}${urlPath}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.ok) return text ? JSON.parse(text) : null;
      let problem: { detail?: string; code?: string; invalidParams?: { name: string; reason: string }[] } | null = null;
      try {
        problem = JSON.parse(text);
      } catch {
        // not a problem document: its text is shown
      }
      const params = problem?.invalidParams?.map((p) => `${p.name} ${p.reason}`).join('; ');
      failure = {
        status: response.status,
        code: problem?.code,
        text: `${response.status}: ${problem?.detail ?? text}${params ? ` (${params})` : ''}`,
        retryAfter: response.headers.get('retry-after') ?? undefined,
      };
    } catch (err) {
      failure = { text: `no answer (${(err as Error).message})` };
    }
    if (!retryable(failure) || attempt >= CARD_STATUS_ATTEMPTS) {
      const again = retryable(failure) ? `; retry with --idempotency-key ${key}` : '';
      throw new Error(`POST ${urlPath} → ${failure.text}${again}`);
    }
    const seconds = Math.min(Number(failure.retryAfter) || 1, 10);
    process.stderr.write(`partners: POST ${urlPath} → ${failure.text}; retrying in ${seconds} s with the same Idempotency-Key\n`);
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  }
}

function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

/** What `--help` returns: the usage, printed as text. */
class Usage {}

/** One field of an answer (`id` is the `_id`), for `--print`. */
function field(result: unknown, name: string): string {
  const key = name === 'id' ? '_id' : name;
  const value = result && typeof result === 'object' ? (result as Record<string, unknown>)[key] : undefined;
  if (value === undefined || value === null) throw new UsageError(`--print ${name}: the answer has no field "${key}"`);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The command line reordered for parseArgs: the options (`--name VALUE`, `--name=VALUE`, `-h`) first,
 * then `--` and every argument in its order. An argument may start with `-`: key ids are base64url
 * thumbprints, and one in 64 does (`revoke-key ID -ymYy…`), which parseArgs would take for an
 * unknown option. A token starting with `--` is an option (unknown ones are still refused); a KID
 * starting with `--` goes after `--`, as usage says.
 */
function optionsThenArguments(argv: string[], stringOptions: ReadonlySet<string>): string[] {
  const options: string[] = [];
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i];
    if (token === '--') {
      args.push(...argv.slice(i + 1));
      break;
    }
    if (token.startsWith('--') || token === '-h') {
      options.push(token);
      if (stringOptions.has(token) && i + 1 < argv.length) options.push(argv[++i]);
    } else args.push(token);
  }
  return [...options, '--', ...args];
}

const STRING_OPTIONS: ReadonlySet<string> = new Set(['--name', '--issuer', '--public-key', '--kid', '--out', '--admin-url', '--token', '--print', '--status', '--reason', '--idempotency-key']);

/** Runs one CLI verb; returns what to print. Exported for tests. */
export async function runPartnersCli(argv: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: optionsThenArguments(argv, STRING_OPTIONS),
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      issuer: { type: 'string' },
      'public-key': { type: 'string' },
      kid: { type: 'string' },
      out: { type: 'string' },
      'admin-url': { type: 'string' },
      token: { type: 'string' },
      print: { type: 'string' },
      status: { type: 'string' },
      reason: { type: 'string' },
      'idempotency-key': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return new Usage();
  const [verb, ...args] = positionals;
  if (verb === 'keygen') {
    const out = path.resolve(need(values.out, '--out DIR'));
    fs.mkdirSync(out, { recursive: true });
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-521' });
    fs.writeFileSync(path.join(out, 'private.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    fs.writeFileSync(path.join(out, 'public.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
    return { privateKey: path.join(out, 'private.pem'), publicKey: path.join(out, 'public.pem') };
  }
  const baseUrl = (values['admin-url'] ?? `http://${process.env.ADMIN_HOST || '127.0.0.1'}:${process.env.ADMIN_PORT || '9876'}`).replace(/\/+$/, '');
  const token = adminToken(values.token);
  const readKey = () => fs.readFileSync(need(values['public-key'], '--public-key FILE'), 'utf8');
  const id = () => need(args[0], 'partner ID');
  switch (verb) {
    case 'add':
      return call(baseUrl, token, 'POST', '/admin/partners', {
        name: need(values.name, '--name'),
        issuer: need(values.issuer, '--issuer'),
        publicKey: readKey(),
        ...(values.kid ? { kid: values.kid } : {}),
      });
    case 'list':
      return call(baseUrl, token, 'GET', '/admin/partners');
    case 'show':
      return call(baseUrl, token, 'GET', `/admin/partners/${encodeURIComponent(id())}`);
    case 'add-key':
      return call(baseUrl, token, 'POST', `/admin/partners/${encodeURIComponent(id())}/keys`, {
        publicKey: readKey(),
        ...(values.kid ? { kid: values.kid } : {}),
      });
    case 'revoke-key':
      return call(baseUrl, token, 'DELETE', `/admin/partners/${encodeURIComponent(id())}/keys/${encodeURIComponent(need(args[1], 'KID'))}`);
    case 'disable':
    case 'enable':
      return call(baseUrl, token, 'PATCH', `/admin/partners/${encodeURIComponent(id())}`, { status: verb === 'disable' ? 'disabled' : 'active' });
    case 'add-tenant':
      return call(baseUrl, token, 'POST', `/admin/partners/${encodeURIComponent(id())}/tenants`, { name: need(values.name, '--name') });
    case 'card-status': {
      const cardKey = need(args[0], 'CARDKEY');
      const body = { status: need(values.status, '--status STATUS').toUpperCase(), reason: need(values.reason, '--reason TEXT') };
      const key = values['idempotency-key'] ?? crypto.randomUUID();
      return callWithRetries(baseUrl, token, `/admin/cards/${encodeURIComponent(cardKey)}/status`, body, key);
    }
    default:
      throw new UsageError(verb ? `unknown verb "${verb}"` : 'missing verb');
  }
}

/** The text the CLI prints for `argv`: the usage, one field (`--print`), or the JSON answer; always ending in a newline. */
export async function partnersCliOutput(argv: string[]): Promise<string> {
  const result = await runPartnersCli(argv);
  if (result instanceof Usage) return USAGE;
  const print = argv.indexOf('--print');
  if (print !== -1) return `${field(result, argv[print + 1] ?? '')}\n`;
  return `${JSON.stringify(result, null, 2)}\n`;
}

if (require.main === module) {
  partnersCliOutput(process.argv.slice(2)).then(
    (text) => process.stdout.write(text),
    (err: unknown) => {
      // parseArgs refuses unknown options with a TypeError: a usage error too.
      const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
      process.stderr.write(`partners: ${(err as Error).message}\n${usage ? USAGE : ''}`);
      process.exit(usage ? 2 : 1);
    }
  );
}
