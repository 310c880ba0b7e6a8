import crypto from 'node:crypto';
import { expect } from 'chai';
import { logsSettled, sharedGateway, waitForRequestLog, type Gateway } from '../support/gateway-process';
import { adminCall, makeKeyPair, registerPartner, type TestPartner } from '../support/partners';
import { rsaKeyPair } from '../support/keys';

async function get(gateway: Gateway, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.baseUrl}${path}`, { headers });
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, text, body: json };
}

describe('e2e: gateway foundation (real process, real PostgreSQL, sandbox upstreams)', function () {
  let gateway: Gateway;
  let acme: TestPartner;
  let globex: TestPartner;
  const tokensUsed: string[] = [];

  before(async function () {
    gateway = await sharedGateway();
    acme = await registerPartner(gateway, 'acme');
    globex = await registerPartner(gateway, 'globex');
  });


  describe('GET /api/partner/health-check', function () {
    it('answers 200 text/plain OK without a token', async function () {
      const response = await get(gateway, '/api/partner/health-check');
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^text\/plain/);
      expect(response.text).to.equal('OK');
    });

    it('answers 200 even with a garbage Authorization header', async function () {
      const response = await get(gateway, '/api/partner/health-check', { authorization: 'Bearer garbage' });
      expect(response.status).to.equal(200);
      expect(response.text).to.equal('OK');
    });
  });

  describe('GET /api/partner/me', function () {
    it('answers the authenticated partner, activeTenantId null and empty lists for a new partner', async function () {
      const token = await acme.token();
      tokensUsed.push(token);
      const response = await get(gateway, '/api/partner/me', { authorization: `Bearer ${token}` });
      expect(response.status).to.equal(200);
      expect(response.body.partner).to.include({ _id: acme.id, issuer: acme.issuer, name: 'acme', status: 'active' });
      expect(response.body.partner._id).to.match(/^[0-9a-f]{24}$/);
      expect(response.body.activeTenantId).to.equal(null);
      expect(response.body.b2bAccounts).to.deep.equal([]);
      expect(response.body.individuals).to.deep.equal([]);
      expect(Object.keys(response.body).sort()).to.deep.equal(['activeTenantId', 'b2bAccounts', 'individuals', 'partner']);
    });

    it('lists the partner\'s B2B tenants, the first one active, and never another partner\'s', async function () {
      const first = await adminCall(gateway, 'POST', `/admin/partners/${globex.id}/tenants`, { name: 'Globex Payroll' });
      const second = await adminCall(gateway, 'POST', `/admin/partners/${globex.id}/tenants`, { name: 'Globex Travel' });
      expect(first.status).to.equal(201);
      expect(first.body._id).to.match(/^[0-9a-f]{24}$/);
      const token = await globex.token();
      tokensUsed.push(token);
      const response = await get(gateway, '/api/partner/me', { authorization: `Bearer ${token}` });
      expect(response.body.partner._id).to.equal(globex.id);
      expect(response.body.activeTenantId).to.equal(first.body._id);
      expect(response.body.b2bAccounts.map((t: { _id: string }) => t._id)).to.deep.equal([first.body._id, second.body._id]);
      const acmeView = await get(gateway, '/api/partner/me', { authorization: `Bearer ${await acme.token()}` });
      expect(acmeView.body.partner._id).to.equal(acme.id);
      expect(acmeView.body.b2bAccounts).to.deep.equal([]);
    });

    it('refuses a missing token with 401 problem+json and WWW-Authenticate', async function () {
      const response = await get(gateway, '/api/partner/me');
      expect(response.status).to.equal(401);
      expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(response.headers.get('www-authenticate')).to.match(/error="invalid_token"/);
      expect(response.body).to.include({ status: 401, code: 'token_missing', title: 'Bearer token missing' });
      expect(response.body.requestId).to.equal(response.headers.get('x-request-id'));
    });

    it('refuses an expired token with 401 token_expired', async function () {
      const token = await acme.token({ now: Math.floor(Date.now() / 1000) - 200, ttlSeconds: 60 });
      tokensUsed.push(token);
      const response = await get(gateway, '/api/partner/me', { authorization: `Bearer ${token}` });
      expect(response.status).to.equal(401);
      expect(response.body.code).to.equal('token_expired');
    });
  });

  describe('admin API', function () {
    it('refuses calls without the admin token, or with a wrong one', async function () {
      const none = await fetch(`${gateway.adminUrl}/admin/partners`);
      expect(none.status).to.equal(401);
      expect(none.headers.get('content-type')).to.match(/^application\/problem\+json/);
      const wrong = await fetch(`${gateway.adminUrl}/admin/partners`, { headers: { authorization: 'Bearer not-the-token-at-all-not-the-token' } });
      expect(wrong.status).to.equal(401);
      expect(((await wrong.json()) as { code: string }).code).to.equal('admin_unauthorized');
    });

    it('lists the registered partners with their keys', async function () {
      const response = await adminCall(gateway, 'GET', '/admin/partners');
      expect(response.status).to.equal(200);
      const ids = response.body.data.map((p: { _id: string }) => p._id);
      expect(ids).to.include.members([acme.id, globex.id]);
      const listed = response.body.data.find((p: { _id: string }) => p._id === acme.id);
      expect(listed.keys[0]).to.include({ kid: acme.kid, status: 'active' });
    });

    const badKeys: { description: string; publicKey: () => string }[] = [
      { description: 'a P-256 key', publicKey: () => makeKeyPair('P-256').publicPem },
      { description: 'a P-384 key', publicKey: () => makeKeyPair('P-384').publicPem },
      {
        description: 'an RSA key',
        publicKey: () => rsaKeyPair().publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      },
      { description: 'a private key', publicKey: () => makeKeyPair().privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
      { description: 'garbage', publicKey: () => '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' },
    ];
    for (const bad of badKeys) {
      it(`refuses to register ${bad.description} with 400 and changes nothing`, async function () {
        // An issuer of this case's own: other files register partners in the same database meanwhile,
        // so the count of all partners is not this test's to compare.
        const issuer = `https://bad-${crypto.randomBytes(4).toString('hex')}.example`;
        const response = await adminCall(gateway, 'POST', '/admin/partners', { name: 'bad', issuer, publicKey: bad.publicKey() });
        expect(response.status).to.equal(400);
        expect(response.body.code).to.equal('validation_failed');
        expect(response.body.invalidParams[0].name).to.equal('publicKey');
        const partners = (await adminCall(gateway, 'GET', '/admin/partners')).body.data as { issuer: string }[];
        expect(partners.some((p) => p.issuer === acme.issuer), 'the list names issuers').to.equal(true);
        expect(partners.filter((p) => p.issuer === issuer), 'no partner was stored').to.deep.equal([]);
      });
    }

    it('refuses a partner body with missing and unknown fields, listing each', async function () {
      const response = await adminCall(gateway, 'POST', '/admin/partners', { name: '', extra: true });
      expect(response.status).to.equal(400);
      const names = response.body.invalidParams.map((p: { name: string }) => p.name);
      expect(names).to.include.members(['issuer', 'publicKey', 'extra', 'name']);
    });

    it('rotates keys: a second key works, revoking the first refuses its tokens, a duplicate kid is 409', async function () {
      const partner = await registerPartner(gateway, 'rotator');
      const next = makeKeyPair();
      const added = await adminCall(gateway, 'POST', `/admin/partners/${partner.id}/keys`, { publicKey: next.publicPem, kid: 'rotator-2026-12' });
      expect(added.status).to.equal(201);
      expect(added.body).to.include({ kid: 'rotator-2026-12', status: 'active' });
      const duplicate = await adminCall(gateway, 'POST', `/admin/partners/${partner.id}/keys`, { publicKey: makeKeyPair().publicPem, kid: 'rotator-2026-12' });
      expect(duplicate.status).to.equal(409);

      const { signPartnerToken } = await import('../../scripts/token');
      const newToken = await signPartnerToken({ partnerId: partner.id, issuer: partner.issuer, privateKey: next.privateKey, kid: 'rotator-2026-12' });
      const oldToken = await partner.token();
      tokensUsed.push(newToken, oldToken);
      expect((await get(gateway, '/api/partner/me', { authorization: `Bearer ${newToken}` })).status).to.equal(200);
      expect((await get(gateway, '/api/partner/me', { authorization: `Bearer ${oldToken}` })).status).to.equal(200);

      const revoked = await adminCall(gateway, 'DELETE', `/admin/partners/${partner.id}/keys/${encodeURIComponent(partner.kid)}`);
      expect(revoked.status).to.equal(200);
      expect(revoked.body.status).to.equal('revoked');
      const refused = await get(gateway, '/api/partner/me', { authorization: `Bearer ${oldToken}` });
      expect(refused.status).to.equal(401);
      expect(refused.body.code).to.equal('signature_invalid');
      expect((await get(gateway, '/api/partner/me', { authorization: `Bearer ${newToken}` })).status).to.equal(200);
      expect((await adminCall(gateway, 'DELETE', `/admin/partners/${partner.id}/keys/no-such-kid`)).status).to.equal(404);
    });

    it('disables and re-enables a partner', async function () {
      const partner = await registerPartner(gateway, 'switch');
      const token = await partner.token();
      tokensUsed.push(token);
      const disabled = await adminCall(gateway, 'PATCH', `/admin/partners/${partner.id}`, { status: 'disabled' });
      expect(disabled.status).to.equal(200);
      expect(disabled.body.status).to.equal('disabled');
      const refused = await get(gateway, '/api/partner/me', { authorization: `Bearer ${token}` });
      expect(refused.body.code).to.equal('partner_disabled');
      await adminCall(gateway, 'PATCH', `/admin/partners/${partner.id}`, { status: 'active' });
      expect((await get(gateway, '/api/partner/me', { authorization: `Bearer ${token}` })).status).to.equal(200);
      expect((await adminCall(gateway, 'PATCH', `/admin/partners/${partner.id}`, { status: 'paused' })).status).to.equal(400);
    });

    it('answers 404 for an unknown partner and for a malformed id', async function () {
      expect((await adminCall(gateway, 'PATCH', '/admin/partners/ffffffffffffffffffffffff', { status: 'disabled' })).status).to.equal(404);
      expect((await adminCall(gateway, 'POST', '/admin/partners/nope/tenants', { name: 'x' })).status).to.equal(404);
      expect((await adminCall(gateway, 'GET', '/admin/partners/ffffffffffffffffffffffff')).status).to.equal(404);
    });
  });

  describe('errors and request ids', function () {
    it('answers an unknown route with a 404 problem', async function () {
      const response = await get(gateway, '/api/partner/nothing-here');
      expect(response.status).to.equal(404);
      expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(response.body).to.include({ code: 'route_not_found', status: 404 });
      expect(response.body.type).to.equal('https://partner-gateway.dev/problems/route_not_found');
    });

    it('answers malformed JSON with 400 and a body over 64 KB with 413', async function () {
      const malformed = await fetch(`${gateway.baseUrl}/api/partner/me`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
      expect(malformed.status).to.equal(400);
      expect(((await malformed.json()) as { code: string }).code).to.equal('malformed_json');
      const large = await fetch(`${gateway.baseUrl}/api/partner/me`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ pad: 'x'.repeat(70 * 1024) }),
      });
      expect(large.status).to.equal(413);
      expect(large.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(((await large.json()) as { code: string }).code).to.equal('payload_too_large');
    });

    it('echoes a well-formed x-request-id and replaces a malformed one', async function () {
      const kept = await get(gateway, '/api/partner/health-check', { 'x-request-id': 'partner-trace-123' });
      expect(kept.headers.get('x-request-id')).to.equal('partner-trace-123');
      const replaced = await get(gateway, '/api/partner/health-check', { 'x-request-id': 'bad id with spaces' });
      expect(replaced.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
      const generated = await get(gateway, '/api/partner/health-check');
      expect(generated.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    });

    it('sends no x-powered-by and sets nosniff', async function () {
      const response = await get(gateway, '/api/partner/me');
      expect(response.headers.get('x-powered-by')).to.equal(null);
      expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
    });
  });

  describe('logs', function () {
    it('writes one JSON line per request with requestId, partnerId, route, status and latency', async function () {
      const token = await acme.token();
      tokensUsed.push(token);
      await get(gateway, '/api/partner/me', { authorization: `Bearer ${token}`, 'x-request-id': 'log-line-check-1' });
      // The line is written asynchronously once the response finishes: wait for it.
      const line = await waitForRequestLog(gateway, 'log-line-check-1');
      expect(line).to.include({ partnerId: acme.id, route: '/api/partner/me', status: 200, method: 'GET' });
      expect(line.latencyMs).to.be.a('number');
    });

    it("routes express-gateway's own (winston) log lines through pino as JSON", async function () {
      const lines = gateway.logLines().filter((l) => typeof l.component === 'string' && (l.component as string).startsWith('express-gateway:'));
      expect(lines.map((l) => l.msg)).to.include('Loaded plugin partner-gateway from package ' + require('node:path').resolve(__dirname, '..', '..', 'plugins', 'partner-gateway', 'index.js'));
      expect(gateway.output(), 'no winston-formatted line').to.not.match(/\[EG:(gateway|plugins|config)\]/);
    });

    it('never logs a token: every token used in this file, valid or not, is absent from the output', async function () {
      const garbage = `${(await acme.token()).slice(0, -20)}tampered-signature-xx`;
      tokensUsed.push(garbage);
      await get(gateway, '/api/partner/me', { authorization: `Bearer ${garbage}` });
      await get(gateway, `/api/partner/me?token=${encodeURIComponent(garbage)}`);
      await logsSettled(gateway);
      const output = gateway.output();
      expect(tokensUsed.length).to.be.at.least(8);
      for (const token of tokensUsed) {
        expect(output.includes(token), 'a whole token was logged').to.equal(false);
        expect(output.includes(token.split('.')[2]), 'a token signature was logged').to.equal(false);
        expect(output.includes(token.split('.')[1]), 'a token payload was logged').to.equal(false);
      }
      expect(output).to.not.match(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
      expect(output).to.include('[REDACTED]');
    });
  });
});
