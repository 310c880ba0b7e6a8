import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { expect } from 'chai';
import { readSettings, projectRoot } from '../../../gateway/settings';

describe('unit: settings', function () {
  it('has the documented defaults', function () {
    const s = readSettings({});
    expect(s).to.include({ port: 8080, adminHost: '127.0.0.1', adminPort: 9876, logLevel: 'info', databaseUrl: undefined, adminToken: undefined });
    expect(s.dataDir).to.equal(path.join(projectRoot, '.data'));
    expect(s.configDir).to.equal(path.join(projectRoot, 'config'));
    expect(s.issuerUrl).to.equal(undefined);
  });

  it('listens for notifications on 9877 with real upstreams, on a free port in sandbox mode (a second sandbox gateway on one machine starts), NOTIFICATIONS_PORT over both', function () {
    expect(readSettings({ ISSUER_URL: 'https://i.example', PROCESSING_URL: 'https://p.example', ACCOUNTS_URL: 'https://a.example' }).notificationsPort).to.equal(9877);
    expect(readSettings({}).notificationsPort).to.equal(0);
    expect(readSettings({ SANDBOX_MODE: 'false' }).notificationsPort).to.equal(9877);
    expect(readSettings({ NOTIFICATIONS_PORT: '7000' }).notificationsPort).to.equal(7000);
  });

  it('reads AUTHORIZATION_DEADLINE_MS (default 2000, 1000 to 10000)', function () {
    expect(readSettings({}).authorizationDeadlineMs).to.equal(2000);
    expect(readSettings({ AUTHORIZATION_DEADLINE_MS: '1500' }).authorizationDeadlineMs).to.equal(1500);
    expect(() => readSettings({ AUTHORIZATION_DEADLINE_MS: '300' })).to.throw(/AUTHORIZATION_DEADLINE_MS/);
  });

  it('reads TOKENIZATION_DEADLINE_MS (default 2000, 1000 to 10000) and TOKEN_RECONCILE_INTERVAL_MS (default 30000)', function () {
    expect(readSettings({}).tokenizationDeadlineMs).to.equal(2000);
    expect(readSettings({ TOKENIZATION_DEADLINE_MS: '3000' }).tokenizationDeadlineMs).to.equal(3000);
    expect(() => readSettings({ TOKENIZATION_DEADLINE_MS: '999' })).to.throw(/TOKENIZATION_DEADLINE_MS/);
    expect(() => readSettings({ TOKENIZATION_DEADLINE_MS: '10001' })).to.throw(/TOKENIZATION_DEADLINE_MS/);
    expect(readSettings({}).tokenReconcileIntervalMs).to.equal(30000);
    expect(readSettings({ TOKEN_RECONCILE_INTERVAL_MS: '1000' }).tokenReconcileIntervalMs).to.equal(1000);
  });

  it('reads AUTHORIZATION_TRACE_FILE (a diagnostic): read as an absolute path; a directory that does not exist refuses the start with the variable named', function () {
    expect(readSettings({}).authorizationTraceFile).to.equal(undefined);
    expect(readSettings({ AUTHORIZATION_TRACE_FILE: path.join(os.tmpdir(), 't.jsonl') }).authorizationTraceFile).to.equal(path.join(os.tmpdir(), 't.jsonl'));
    expect(path.isAbsolute(readSettings({ AUTHORIZATION_TRACE_FILE: 't.jsonl' }).authorizationTraceFile!)).to.equal(true);
    expect(() => readSettings({ AUTHORIZATION_TRACE_FILE: path.join(os.tmpdir(), `missing-${process.pid}-${Date.now()}`, 't.jsonl') })).to.throw(/AUTHORIZATION_TRACE_FILE must name a file in an existing directory/);
  });

  it('reads every variable', function () {
    const s = readSettings({
      PORT: '9000',
      ADMIN_HOST: '10.0.0.1',
      ADMIN_PORT: '9001',
      ADMIN_TOKEN: 'x'.repeat(32),
      DATABASE_URL: 'postgres://u@db/x',
      DATA_DIR: '/tmp/d',
      ISSUER_URL: 'https://issuer.example/',
      PROCESSING_URL: 'https://processing.example',
      ACCOUNTS_URL: 'http://accounts.internal:8080',
      LOG_LEVEL: 'DEBUG',
    });
    expect(s).to.include({ port: 9000, adminHost: '10.0.0.1', adminPort: 9001, databaseUrl: 'postgres://u@db/x', dataDir: '/tmp/d', logLevel: 'debug' });
    expect(s.issuerUrl).to.equal('https://issuer.example');
  });

  const refused: [Record<string, string>, RegExp][] = [
    [{ PORT: 'eighty' }, /PORT must be an integer/],
    [{ PORT: '70000' }, /PORT must be an integer from 0 to 65535/],
    [{ ADMIN_TOKEN: 'short' }, /ADMIN_TOKEN must be at least 32/],
    [{ ISSUER_URL: 'not a url' }, /ISSUER_URL must be an absolute/],
    [{ ACCOUNTS_URL: 'ftp://x' }, /ACCOUNTS_URL must be an http/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
  ];
  for (const [env, message] of refused) {
    it(`refuses ${JSON.stringify(env)}`, function () {
      expect(() => readSettings(env)).to.throw(message);
    });
  }
});

describe('unit: settings: WEBHOOKS_SECRET_KEY and WEBHOOKS_SECRET_KEY_PREVIOUS', function () {
  const bytes = crypto.randomBytes(32);
  const other = crypto.randomBytes(32);

  it('is unset by default: secrets stay plaintext', function () {
    const s = readSettings({});
    expect(s.webhooksSecretKey).to.equal(undefined);
    expect(s.webhooksSecretKeyPrevious).to.equal(undefined);
    expect(readSettings({ WEBHOOKS_SECRET_KEY: '' }).webhooksSecretKey).to.equal(undefined);
  });

  it('reads 32 bytes as base64 (padded or not) and base64url, with surrounding whitespace (a secret file\'s newline), as one and the same key', function () {
    const forms = [bytes.toString('base64'), bytes.toString('base64').replace(/=$/, ''), bytes.toString('base64url'), `${bytes.toString('base64url')}=`, ` ${bytes.toString('base64')}\n`];
    for (const form of forms) {
      const key = readSettings({ WEBHOOKS_SECRET_KEY: form }).webhooksSecretKey!;
      expect(key.type, form).to.equal('secret');
      expect(key.export().equals(bytes), form).to.equal(true);
    }
  });

  it('reads the previous key with the current one', function () {
    const s = readSettings({ WEBHOOKS_SECRET_KEY: bytes.toString('base64'), WEBHOOKS_SECRET_KEY_PREVIOUS: other.toString('base64url') });
    expect(s.webhooksSecretKey!.export().equals(bytes)).to.equal(true);
    expect(s.webhooksSecretKeyPrevious!.export().equals(other)).to.equal(true);
  });

  it('never prints the key: neither JSON nor inspect of the settings holds its bytes in any encoding', function () {
    const s = readSettings({ WEBHOOKS_SECRET_KEY: bytes.toString('base64'), WEBHOOKS_SECRET_KEY_PREVIOUS: other.toString('base64') });
    const printed = JSON.stringify(s) + util.inspect(s, { depth: 10, showHidden: true });
    for (const key of [bytes, other]) {
      for (const encoding of ['base64', 'base64url', 'hex'] as const) expect(printed).to.not.include(key.toString(encoding).replace(/=+$/, ''));
      expect(printed).to.not.include(JSON.stringify([...key]).slice(1, -1));
    }
  });

  // Each refused value: the message names the variable, and never holds the value or a piece of it.
  const refusals: [string, Record<string, string>, RegExp][] = [
    ['31 bytes', { WEBHOOKS_SECRET_KEY: crypto.randomBytes(31).toString('base64') }, /^WEBHOOKS_SECRET_KEY must be the base64 or base64url of exactly 32 random bytes/],
    ['33 bytes', { WEBHOOKS_SECRET_KEY: crypto.randomBytes(33).toString('base64') }, /^WEBHOOKS_SECRET_KEY must be the base64 or base64url of exactly 32 random bytes/],
    ['64 hex characters', { WEBHOOKS_SECRET_KEY: crypto.randomBytes(32).toString('hex') }, /^WEBHOOKS_SECRET_KEY must be/],
    ['a passphrase', { WEBHOOKS_SECRET_KEY: 'correct horse battery staple correct horse b' }, /^WEBHOOKS_SECRET_KEY must be/],
    ['base64 and base64url alphabets mixed', { WEBHOOKS_SECRET_KEY: `+_${crypto.randomBytes(30).toString('base64url')}A` }, /^WEBHOOKS_SECRET_KEY must be/],
    ['a non-canonical last character (unused bits set)', { WEBHOOKS_SECRET_KEY: `${bytes.toString('base64url').slice(0, 42)}${'B'}` }, /^WEBHOOKS_SECRET_KEY must be/],
    ['one byte repeated', { WEBHOOKS_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') }, /^WEBHOOKS_SECRET_KEY is one byte repeated, not a random key/],
    ['a bad previous key', { WEBHOOKS_SECRET_KEY: bytes.toString('base64'), WEBHOOKS_SECRET_KEY_PREVIOUS: crypto.randomBytes(16).toString('base64') }, /^WEBHOOKS_SECRET_KEY_PREVIOUS must be/],
    ['a previous key without a current one', { WEBHOOKS_SECRET_KEY_PREVIOUS: other.toString('base64') }, /^WEBHOOKS_SECRET_KEY_PREVIOUS is set but WEBHOOKS_SECRET_KEY is not/],
    ['the previous key equal to the current one', { WEBHOOKS_SECRET_KEY: bytes.toString('base64'), WEBHOOKS_SECRET_KEY_PREVIOUS: bytes.toString('base64url') }, /^WEBHOOKS_SECRET_KEY_PREVIOUS is the same key as WEBHOOKS_SECRET_KEY/],
  ];
  for (const [what, env, message] of refusals) {
    it(`refuses ${what}, naming the variable and never the value`, function () {
      let error: Error | undefined;
      try {
        readSettings(env);
      } catch (err) {
        error = err as Error;
      }
      expect(error, 'refused').to.be.instanceOf(Error);
      expect(error!.message).to.match(message);
      for (const value of Object.values(env)) {
        const trimmed = value.trim();
        // No run of 8 characters of the value appears in the message.
        for (let i = 0; i + 8 <= trimmed.length; i++) expect(error!.message, `${what}: a piece of the value`).to.not.include(trimmed.slice(i, i + 8));
      }
    });
  }
});
