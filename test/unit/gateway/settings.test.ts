import path from 'node:path';
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
