import crypto, { type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import proxyaddr from 'proxy-addr';

/**
 * Runtime settings, read once from the environment at start.
 * Every variable here is documented in the README's configuration table.
 */
export interface Settings {
  /** Port of the partner-facing HTTP listener (`PORT`, default 8080; 0 picks a free port). */
  port: number;
  /** Interface of the partner-facing listener (`HOST`, default 0.0.0.0). */
  host: string;
  /** Interface of the admin API (`ADMIN_HOST`, default 127.0.0.1). */
  adminHost: string;
  /**
   * Proxies whose X-Forwarded-For names the client (`TRUST_PROXY`, proxy-addr syntax: `loopback`,
   * addresses, CIDR ranges, comma-separated); unset: the TCP peer is the client (gateway/http/client-address.ts).
   */
  trustProxy: string | undefined;
  /** Port of the admin API (`ADMIN_PORT`, default 9876; 0 picks a free port). */
  adminPort: number;
  /** Bearer token of the admin API (`ADMIN_TOKEN`); generated into `DATA_DIR/admin-token` when unset. */
  adminToken: string | undefined;
  /** PostgreSQL connection string (`DATABASE_URL`); unset means embedded PostgreSQL (PGlite). */
  databaseUrl: string | undefined;
  /** Where the embedded database and generated secrets live (`DATA_DIR`, default ./.data). */
  dataDir: string;
  /** Card issuer platform base URL (`ISSUER_URL`); unset starts the sandbox. */
  issuerUrl: string | undefined;
  /** Card processing system base URL (`PROCESSING_URL`); unset starts the sandbox. */
  processingUrl: string | undefined;
  /** Account-creation proxy base URL (`ACCOUNTS_URL`); unset starts the sandbox. */
  accountsUrl: string | undefined;
  /** pino level (`LOG_LEVEL`, default info): fatal, error, warn, info, debug, trace or silent. */
  logLevel: string;
  /** Directory holding gateway.config.yml, system.config.yml and models/ (`CONFIG_DIR`, default ./config). */
  configDir: string;
  /**
   * `PIPELINE_ENGINE` as written (trimmed; undefined when unset or empty): which engine runs the
   * pipelines is gateway/runtime's to read and check (an unknown one refuses the start there).
   */
  pipelineEngine: string | undefined;
  /** Maximum connections of the PostgreSQL pool (`DATABASE_POOL_MAX`, default 10). */
  databasePoolMax: number;
  /**
   * Whether the gateway keeps prepared statements on its PostgreSQL connections
   * (`DATABASE_PREPARED_STATEMENTS`, default true): the authorization decision's statements and the
   * webhook dispatcher's step, parsed and planned once per connection. False behind a pooler in
   * transaction mode that does not carry prepared statements between server connections (PgBouncer
   * before 1.21, or without `max_prepared_statements`). Never used on the embedded database.
   */
  databasePreparedStatements: boolean;
  /** Timeout of one upstream call in milliseconds (`UPSTREAM_TIMEOUT_MS`, default 5000). */
  upstreamTimeoutMs: number;
  /**
   * How old the heartbeat of an idempotency key's claim may grow before another attempt of its
   * request may take the key over (`IDEMPOTENCY_STALE_AFTER_SECONDS`, default 10, 2 to 600): the
   * bound on how long a gateway that died mid-request blocks retries with 409. The holder refreshes
   * its heartbeat five times within it (every 2 s at the default). docs/reliability.md.
   */
  idempotencyStaleAfterSeconds: number;
  /** How long a found owner of an individual or card is cached (`OWNERSHIP_CACHE_TTL_MS`, default 30000). */
  ownershipCacheTtlMs: number;
  /** Interval of the card reconciler's passes in ms (`CARD_RECONCILE_INTERVAL_MS`, default 60000; docs/reliability.md). */
  cardReconcileIntervalMs: number;
  /** Most cards one card reconciler pass reads from the issuer (`CARD_RECONCILE_BATCH`, default 100). */
  cardReconcileBatch: number;
  /** Interval of the transaction reconciler's passes over the processor's change feed in ms (`TRANSACTION_RECONCILE_INTERVAL_MS`, default 30000; docs/transactions.md). */
  transactionReconcileIntervalMs: number;
  /**
   * Days a partner event stays in the event log (`WEBHOOKS_EVENT_RETENTION_DAYS`, default 30; docs/events.md),
   * and a deleted webhook endpoint with its delivery history (docs/webhooks.md).
   */
  eventRetentionDays: number;
  /**
   * Days the upstreams' notifications are remembered to apply each once (`NOTIFICATIONS_RETENTION_DAYS`,
   * default 7, at least 4): longer than any upstream's retry window (docs/upstreams.md, section 9).
   */
  notificationRetentionDays: number;
  /**
   * Whether the upstreams are the built-in sandboxes (`SANDBOX_MODE`, true or false; default: true
   * when ISSUER_URL, PROCESSING_URL and ACCOUNTS_URL are all unset). The cluster primary passes it on
   * to its workers, which are handed the sandboxes' URLs. Webhook endpoints may then be http and loopback.
   */
  sandboxMode: boolean;
  /** Webhook endpoints may be http and loopback or private addresses outside sandbox mode (`WEBHOOKS_ALLOW_PRIVATE`, default false). */
  webhooksAllowPrivate: boolean;
  /** Timeout of one webhook delivery attempt in ms (`WEBHOOKS_TIMEOUT_MS`, default 10000). */
  webhooksTimeoutMs: number;
  /** How long a delivery is retried, from the event's queuing, in seconds (`WEBHOOKS_RETRY_WINDOW_SECONDS`, default 259200: 3 days). */
  webhooksRetryWindowSeconds: number;
  /** The first retry's delay in ms, doubled at each attempt (`WEBHOOKS_RETRY_BASE_MS`, default 10000). */
  webhooksRetryBaseMs: number;
  /** The longest delay between two attempts in ms (`WEBHOOKS_RETRY_MAX_DELAY_MS`, default 3600000). */
  webhooksRetryMaxDelayMs: number;
  /** Webhook deliveries one process sends at once (`WEBHOOKS_CONCURRENCY`, default 32). */
  webhooksConcurrency: number;
  /** Deliveries in flight to one endpoint at once, across processes (`WEBHOOKS_ENDPOINT_CONCURRENCY`, default 4). */
  webhooksEndpointConcurrency: number;
  /** Interval of the dispatcher's look for due deliveries in ms (`WEBHOOKS_POLL_MS`, default 1000); a new event wakes it at once. */
  webhooksPollMs: number;
  /** How long a rotated-out secret still signs, in seconds (`WEBHOOKS_SECRET_OVERLAP_SECONDS`, default 86400). */
  webhooksSecretOverlapSeconds: number;
  /** Interface of the upstream-notification listener (`NOTIFICATIONS_HOST`, default 127.0.0.1; docs/upstreams.md). */
  notificationsHost: string;
  /**
   * Port of the upstream-notification listener (`NOTIFICATIONS_PORT`; default 9877, in sandbox mode a
   * free port, which the embedded sandboxes are told: a second sandbox gateway on one machine starts; 0 picks a free port).
   */
  notificationsPort: number;
  /**
   * How long the card processing system waits for an authorization decision (`AUTHORIZATION_DEADLINE_MS`,
   * default 2000, 1000 to 10000: below it the 300 ms margin and the recording leave the checks nothing; docs/authorizations.md): the gateway answers before it, less its margin.
   */
  authorizationDeadlineMs: number;
  /**
   * How long the card processing system waits for a tokenization decision (`TOKENIZATION_DEADLINE_MS`,
   * default 2000, 1000 to 10000 as the authorizations'; docs/tokens.md, "The decision"): the gateway answers before it, less the same margin.
   */
  tokenizationDeadlineMs: number;
  /** Interval of the token reconciler's passes over the processor's token change feed in ms (`TOKEN_RECONCILE_INTERVAL_MS`, default 30000; docs/upstreams.md 10.7). */
  tokenReconcileIntervalMs: number;
  /**
   * Secrets the issuer signs its notifications with (`ISSUER_NOTIFY_SECRET`, at least 32 characters;
   * two, comma-separated, during the upstream's rotation). Empty outside sandbox mode: the issuer's route answers 404.
   */
  issuerNotifySecrets: string[];
  /** Secrets of the processing system's notifications (`PROCESSING_NOTIFY_SECRET`, as the issuer's). */
  processingNotifySecrets: string[];
  /** Webhook endpoints one partner may have (`WEBHOOKS_MAX_ENDPOINTS`, default 16; one more is 409). */
  webhooksMaxEndpoints: number;
  /**
   * The key webhook endpoint secrets are encrypted under in PostgreSQL (`WEBHOOKS_SECRET_KEY`:
   * base64 or base64url of 32 random bytes; AES-256-GCM, docs/webhooks.md "Storage of secrets").
   * Unset: they are stored in plaintext, as before. A KeyObject: it never prints its bytes.
   */
  webhooksSecretKey: KeyObject | undefined;
  /**
   * The key being rotated out (`WEBHOOKS_SECRET_KEY_PREVIOUS`, same form): secrets under it are still
   * read, and re-encrypted under `WEBHOOKS_SECRET_KEY` at start. Only with `WEBHOOKS_SECRET_KEY`.
   */
  webhooksSecretKeyPrevious: KeyObject | undefined;
  /** Worker processes (`WORKERS`, default: the number of cores); 1 runs without the cluster. */
  workers: number;
  /** Redis shared by every instance for rate-limit counts (`REDIS_URL`, redis:// or rediss://); unset: counts stay in each process. */
  redisUrl: string | undefined;
  /** Prefix of every key the gateway writes to Redis (`REDIS_KEY_PREFIX`, default `partner-gateway:`). */
  redisKeyPrefix: string;
  /** Whether gateway.config.yml is watched and hot-reloaded (`CONFIG_WATCH`, default true). */
  configWatch: boolean;
  /** Failed token verifications a minute per client address before 429 (`AUTH_FAILURES_PER_ADDRESS_PER_MINUTE`, default 60). */
  authFailuresPerAddressPerMinute: number;
  /** Failed token verifications a minute per claimed partner before 429 (`AUTH_FAILURES_PER_PARTNER_PER_MINUTE`, default 30). */
  authFailuresPerPartnerPerMinute: number;
  /**
   * A diagnostic, never set in production (`AUTHORIZATION_TRACE_FILE`, unset: off): the file each
   * process appends a JSON line per authorization decision to, with its garbage collections and
   * event-loop delay (gateway/authorizations/decision-trace.ts; docs/performance.md, "Diagnostics:
   * the decision trace and GC tracing").
   * Absolute once read; its directory must exist at start, else the start is refused. A file that
   * cannot be written after that turns the diagnostic off with one error line, never the gateway.
   */
  authorizationTraceFile: string | undefined;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `TRUST_PROXY`'s entries, as proxy-addr compiles them (here to check it, in gateway/http/client-address.ts to use it). */
export function trustedProxies(trustProxy: string): string[] {
  return trustProxy.split(',').map((s) => s.trim()).filter(Boolean);
}

function trustProxyFrom(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.TRUST_PROXY?.trim() || undefined;
  try {
    if (raw) proxyaddr.compile(trustedProxies(raw));
  } catch (err) {
    throw new Error(`TRUST_PROXY must be a comma-separated list of addresses, CIDR ranges or names (loopback, linklocal, uniquelocal): ${(err as Error).message}`);
  }
  return raw;
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function urlFrom(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`${name} must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function booleanFrom(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new Error(`${name} must be true or false, got "${raw}"`);
}

function notifySecretsFrom(env: NodeJS.ProcessEnv, name: string): string[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return [];
  const secrets = raw.split(',').map((s) => s.trim());
  // The value is a secret: never echoed.
  if (secrets.length > 2 || secrets.some((s) => s.length < 32)) throw new Error(`${name} must be one secret of at least 32 characters, or two comma-separated during a rotation`);
  return secrets;
}

/** A 32-byte key in base64 (`+/`, 44 characters with its `=`) or base64url (`-_`, 43 or 44 with `=`). */
const KEY_BASE64 = /^(?:[A-Za-z0-9+/]{43}|[A-Za-z0-9_-]{43})=?$/;

/**
 * A 256-bit key from base64 or base64url: exactly 32 bytes, canonically encoded (the last
 * character's unused bits zero), not one byte repeated. Surrounding whitespace (a trailing newline
 * of a mounted secret file) is ignored. The decoded bytes are wiped once the KeyObject holds them.
 */
function keyFrom(env: NodeJS.ProcessEnv, name: string): KeyObject | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = raw.trim();
  // The value is a key: a refusal names the variable, never the value or any part of it.
  const refused = `${name} must be the base64 or base64url of exactly 32 random bytes (a 256-bit key; generate one with \`openssl rand -base64 32\`); the value given is not (it is not shown)`;
  if (!KEY_BASE64.test(value)) throw new Error(refused);
  const unpadded = value.replace(/=$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  const bytes = Buffer.from(unpadded, 'base64url');
  try {
    if (bytes.length !== 32 || bytes.toString('base64url') !== unpadded) throw new Error(refused);
    if (bytes.every((byte) => byte === bytes[0])) throw new Error(`${name} is one byte repeated, not a random key (it is not shown): generate one with \`openssl rand -base64 32\``);
    return crypto.createSecretKey(bytes);
  } finally {
    bytes.fill(0);
  }
}

/** `WEBHOOKS_SECRET_KEY` and `WEBHOOKS_SECRET_KEY_PREVIOUS`, checked together. */
function webhookKeysFrom(env: NodeJS.ProcessEnv): { current: KeyObject | undefined; previous: KeyObject | undefined } {
  const current = keyFrom(env, 'WEBHOOKS_SECRET_KEY');
  const previous = keyFrom(env, 'WEBHOOKS_SECRET_KEY_PREVIOUS');
  if (previous && !current) throw new Error('WEBHOOKS_SECRET_KEY_PREVIOUS is set but WEBHOOKS_SECRET_KEY is not: the previous key is only read during a rotation to a new WEBHOOKS_SECRET_KEY');
  if (previous && current && previous.equals(current)) throw new Error('WEBHOOKS_SECRET_KEY_PREVIOUS is the same key as WEBHOOKS_SECRET_KEY: set it to the key being rotated out, or unset it');
  return { current, previous };
}

function redisUrlFrom(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = undefined;
  }
  // The value may hold a password: never echoed.
  if (!parsed || (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')) throw new Error(`${name} must be a redis:// or rediss:// URL`);
  return raw;
}

function redisKeyPrefixFrom(env: NodeJS.ProcessEnv, name: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return 'partner-gateway:';
  if (!/^[A-Za-z0-9._:-]{1,100}$/.test(raw)) throw new Error(`${name} must be 1 to 100 of A-Z a-z 0-9 . _ : -, got "${raw}"`);
  return raw;
}

function traceFileFrom(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const file = path.resolve(raw);
  const dir = path.dirname(file);
  let directory = false;
  try {
    directory = fs.statSync(dir).isDirectory();
  } catch {
    directory = false;
  }
  if (!directory) throw new Error(`${name} must name a file in an existing directory (a diagnostic, not for production), got "${raw}": ${dir} is not a directory`);
  return file;
}

/** The project root: dist/gateway/settings.js sits two levels below it. */
export const projectRoot = path.resolve(__dirname, '..', '..');

/**
 * Reads and checks the settings; throws with the variable's name on a bad value so that the
 * gateway refuses to start rather than run half-configured.
 */
export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const logLevel = (env.LOG_LEVEL || 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }
  const webhookKeys = webhookKeysFrom(env);
  const adminToken = env.ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 32) {
    throw new Error('ADMIN_TOKEN must be at least 32 characters long');
  }
  const sandboxMode = booleanFrom(env, 'SANDBOX_MODE', !env.ISSUER_URL && !env.PROCESSING_URL && !env.ACCOUNTS_URL);
  return {
    port: intFrom(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '0.0.0.0',
    adminHost: env.ADMIN_HOST || '127.0.0.1',
    trustProxy: trustProxyFrom(env),
    adminPort: intFrom(env, 'ADMIN_PORT', 9876, 0, 65535),
    adminToken,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: path.resolve(env.DATA_DIR || path.join(projectRoot, '.data')),
    issuerUrl: urlFrom(env, 'ISSUER_URL'),
    processingUrl: urlFrom(env, 'PROCESSING_URL'),
    accountsUrl: urlFrom(env, 'ACCOUNTS_URL'),
    logLevel,
    configDir: path.resolve(env.CONFIG_DIR || path.join(projectRoot, 'config')),
    pipelineEngine: env.PIPELINE_ENGINE?.trim() || undefined,
    databasePoolMax: intFrom(env, 'DATABASE_POOL_MAX', 10, 1, 200),
    databasePreparedStatements: booleanFrom(env, 'DATABASE_PREPARED_STATEMENTS', true),
    upstreamTimeoutMs: intFrom(env, 'UPSTREAM_TIMEOUT_MS', 5000, 50, 120000),
    idempotencyStaleAfterSeconds: intFrom(env, 'IDEMPOTENCY_STALE_AFTER_SECONDS', 10, 2, 600),
    ownershipCacheTtlMs: intFrom(env, 'OWNERSHIP_CACHE_TTL_MS', 30000, 0, 3600000),
    cardReconcileIntervalMs: intFrom(env, 'CARD_RECONCILE_INTERVAL_MS', 60000, 100, 86400000),
    cardReconcileBatch: intFrom(env, 'CARD_RECONCILE_BATCH', 100, 1, 10000),
    transactionReconcileIntervalMs: intFrom(env, 'TRANSACTION_RECONCILE_INTERVAL_MS', 30000, 100, 86400000),
    eventRetentionDays: intFrom(env, 'WEBHOOKS_EVENT_RETENTION_DAYS', 30, 1, 3650),
    notificationRetentionDays: intFrom(env, 'NOTIFICATIONS_RETENTION_DAYS', 7, 4, 3650),
    sandboxMode,
    webhooksAllowPrivate: booleanFrom(env, 'WEBHOOKS_ALLOW_PRIVATE', false),
    webhooksTimeoutMs: intFrom(env, 'WEBHOOKS_TIMEOUT_MS', 10000, 100, 60000),
    webhooksRetryWindowSeconds: intFrom(env, 'WEBHOOKS_RETRY_WINDOW_SECONDS', 259200, 1, 30 * 86400),
    webhooksRetryBaseMs: intFrom(env, 'WEBHOOKS_RETRY_BASE_MS', 10000, 10, 3600000),
    webhooksRetryMaxDelayMs: intFrom(env, 'WEBHOOKS_RETRY_MAX_DELAY_MS', 3600000, 10, 86400000),
    webhooksConcurrency: intFrom(env, 'WEBHOOKS_CONCURRENCY', 32, 1, 1000),
    webhooksEndpointConcurrency: intFrom(env, 'WEBHOOKS_ENDPOINT_CONCURRENCY', 4, 1, 100),
    webhooksPollMs: intFrom(env, 'WEBHOOKS_POLL_MS', 1000, 10, 60000),
    webhooksSecretOverlapSeconds: intFrom(env, 'WEBHOOKS_SECRET_OVERLAP_SECONDS', 86400, 1, 7 * 86400),
    notificationsHost: env.NOTIFICATIONS_HOST || '127.0.0.1',
    notificationsPort: intFrom(env, 'NOTIFICATIONS_PORT', sandboxMode ? 0 : 9877, 0, 65535),
    authorizationDeadlineMs: intFrom(env, 'AUTHORIZATION_DEADLINE_MS', 2000, 1000, 10000),
    tokenizationDeadlineMs: intFrom(env, 'TOKENIZATION_DEADLINE_MS', 2000, 1000, 10000),
    tokenReconcileIntervalMs: intFrom(env, 'TOKEN_RECONCILE_INTERVAL_MS', 30000, 100, 86400000),
    issuerNotifySecrets: notifySecretsFrom(env, 'ISSUER_NOTIFY_SECRET'),
    processingNotifySecrets: notifySecretsFrom(env, 'PROCESSING_NOTIFY_SECRET'),
    webhooksMaxEndpoints: intFrom(env, 'WEBHOOKS_MAX_ENDPOINTS', 16, 1, 1000),
    webhooksSecretKey: webhookKeys.current,
    webhooksSecretKeyPrevious: webhookKeys.previous,
    workers: intFrom(env, 'WORKERS', os.availableParallelism(), 1, 64),
    redisUrl: redisUrlFrom(env, 'REDIS_URL'),
    redisKeyPrefix: redisKeyPrefixFrom(env, 'REDIS_KEY_PREFIX'),
    configWatch: booleanFrom(env, 'CONFIG_WATCH', true),
    authFailuresPerAddressPerMinute: intFrom(env, 'AUTH_FAILURES_PER_ADDRESS_PER_MINUTE', 60, 1, 1_000_000_000),
    authFailuresPerPartnerPerMinute: intFrom(env, 'AUTH_FAILURES_PER_PARTNER_PER_MINUTE', 30, 1, 1_000_000_000),
    authorizationTraceFile: traceFileFrom(env, 'AUTHORIZATION_TRACE_FILE'),
  };
}
