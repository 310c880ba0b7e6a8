import http from 'node:http';
import { expect } from 'chai';
import { createAdminApi } from '../../../../gateway/admin/admin-api';
import { createLogger } from '../../../../gateway/logging/logger';
import { listenLocally, openServices, type InProcessServices } from '../../../support/in-process';
import { makeKeyPair } from '../../../support/partners';

/**
 * The partner setting `tokenizeBeforeActivation` (docs/tokens.md "Decisions", docs/admin-api.md):
 * an operator's, over the real admin API on real PostgreSQL: set and read back by the admin API only,
 * audited in the change's transaction, a bad value refused with nothing changed.
 */
describe('tokens: the operator setting tokenizeBeforeActivation (admin API)', function () {
  this.timeout(20_000);
  const token = 'a'.repeat(40);
  let services: InProcessServices;
  let admin: { url: string; close(): Promise<void> };

  before(async function () {
    services = await openServices();
    admin = await listenLocally(http.createServer(createAdminApi({ partners: services.partners, adminToken: token, log: createLogger({ level: 'silent' }) })));
  });
  after(async function () {
    await admin?.close();
    await services?.close();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${admin.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('is off by default, set and cleared by PATCH, shown by the admin API, each change audited', async function () {
    const partner = await services.partners.create({ name: 'tba', issuer: 'https://tba.example', publicKey: makeKeyPair().publicPem });
    expect((await call('GET', `/admin/partners/${partner._id}`)).body.tokenizeBeforeActivation).to.equal(false);
    const on = await call('PATCH', `/admin/partners/${partner._id}`, { tokenizeBeforeActivation: true });
    expect(on.status).to.equal(200);
    expect(on.body).to.include({ _id: partner._id, tokenizeBeforeActivation: true, status: 'active' });
    expect((await services.db.query('SELECT tokenize_before_activation FROM partners WHERE id = $1', [partner._id])).rows[0].tokenize_before_activation).to.equal(true);
    expect((await call('GET', `/admin/partners/${partner._id}`)).body.tokenizeBeforeActivation).to.equal(true);
    await call('PATCH', `/admin/partners/${partner._id}`, { tokenizeBeforeActivation: false });
    const audit = (await services.db.query("SELECT details FROM audit_log WHERE partner_id = $1 AND operation = 'admin.partner.tokenize-before-activation' ORDER BY id", [partner._id])).rows;
    expect(audit.map((a) => a.details)).to.deep.equal([
      { tokenizeBeforeActivation: true, source: 'operator' },
      { tokenizeBeforeActivation: false, source: 'operator' },
    ]);
    // Another field's change writes no such entry.
    await call('PATCH', `/admin/partners/${partner._id}`, { processingEnabled: true });
    expect((await services.db.query("SELECT count(*)::int AS n FROM audit_log WHERE partner_id = $1 AND operation = 'admin.partner.tokenize-before-activation'", [partner._id])).rows[0].n).to.equal(2);
  });

  it('a value that is not a boolean is 400 and changes nothing', async function () {
    const partner = await services.partners.create({ name: 'tba-bad', issuer: 'https://tba-bad.example', publicKey: makeKeyPair().publicPem });
    const refused = await call('PATCH', `/admin/partners/${partner._id}`, { tokenizeBeforeActivation: 'yes' });
    expect(refused.status).to.equal(400);
    expect((await services.db.query('SELECT tokenize_before_activation FROM partners WHERE id = $1', [partner._id])).rows[0].tokenize_before_activation).to.equal(false);
    expect((await services.db.query('SELECT count(*)::int AS n FROM audit_log WHERE partner_id = $1', [partner._id])).rows[0].n).to.equal(0);
  });
});
