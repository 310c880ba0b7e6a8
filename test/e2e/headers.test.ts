import { expect } from 'chai';
import { api, cardBody, individualBody } from '../support/api';
import { sharedGateway, waitForRequestLog, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { rsaSecurityKey } from '../support/keys';

interface Probe {
  description: string;
  request: () => Promise<Response>;
  status: number;
}

describe('e2e: response headers of both listeners (no x-powered-by, nosniff, no-store on card data)', function () {
  this.timeout(90_000);
  let gateway: Gateway;
  let acme: TestPartner;
  let card: { cardKey: string; expDate: string };

  before(async function () {
    gateway = await sharedGateway();
    acme = await registerPartner(gateway, 'acme-headers');
    const individual = (await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody() })).body;
    const issued = await api(gateway, acme, 'POST', `/individual/accounts/${individual._id}/cards/virtual`, { body: cardBody(individual.clientID) });
    expect(issued.status, JSON.stringify(issued.body)).to.equal(201);
    card = issued.body;
  });


  const partner = (path: string, init: RequestInit = {}) => fetch(`${gateway.baseUrl}/api/partner${path}`, init);
  const admin = (path: string, init: RequestInit = {}, token: string | null = gateway.adminToken) =>
    fetch(`${gateway.adminUrl}${path}`, { ...init, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers as Record<string, string>) } });
  const json = { 'content-type': 'application/json' };

  const probes: Probe[] = [
    { description: 'partner: health check', request: () => partner('/health-check'), status: 200 },
    { description: 'partner: OpenAPI document', request: () => partner('/openapi.json'), status: 200 },
    { description: 'partner: documentation page', request: () => partner('/docs'), status: 200 },
    { description: 'partner: /me with a token', request: async () => partner('/me', { headers: { authorization: `Bearer ${await acme.token()}` } }), status: 200 },
    { description: 'partner: no token (401)', request: () => partner('/me'), status: 401 },
    { description: 'partner: unknown route (404)', request: () => partner('/nowhere'), status: 404 },
    { description: 'partner: outside /api/partner (404)', request: () => fetch(`${gateway.baseUrl}/`), status: 404 },
    { description: 'partner: unserved method (404)', request: async () => partner('/me', { method: 'DELETE', headers: { authorization: `Bearer ${await acme.token()}` } }), status: 404 },
    {
      description: 'partner: malformed JSON (400)',
      request: async () => partner('/individual/accounts', { method: 'POST', headers: { ...json, authorization: `Bearer ${await acme.token()}` }, body: '{"firstName":' }),
      status: 400,
    },
    {
      description: 'partner: body over 64 KB (413)',
      request: async () => partner('/individual/accounts', { method: 'POST', headers: { ...json, authorization: `Bearer ${await acme.token()}` }, body: JSON.stringify({ x: 'a'.repeat(70_000) }) }),
      status: 413,
    },
    { description: 'admin: partners list', request: () => admin('/admin/partners'), status: 200 },
    { description: 'admin: no token (401)', request: () => admin('/admin/partners', {}, null), status: 401 },
    { description: 'admin: unknown route (404)', request: () => admin('/admin/nowhere'), status: 404 },
    { description: 'admin: invalid body (400)', request: () => admin('/admin/partners', { method: 'POST', headers: json, body: JSON.stringify({ name: 1 }) }), status: 400 },
    { description: 'admin: malformed JSON (400)', request: () => admin('/admin/partners', { method: 'POST', headers: json, body: '{' }), status: 400 },
  ];
  for (const probe of probes) {
    it(`${probe.description}: no x-powered-by, X-Content-Type-Options nosniff`, async function () {
      const response = await probe.request();
      await response.arrayBuffer();
      expect(response.status).to.equal(probe.status);
      expect(response.headers.get('x-powered-by')).to.equal(null);
      expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
    });
  }

  /** An RSA public key as a partner sends it: base64 of the SPKI DER. */
  const securityKey = rsaSecurityKey();

  const cardData: { description: string; method: string; path: () => string; body?: unknown; status: number }[] = [
    { description: 'card details', method: 'GET', path: () => `/cards/${card.cardKey}`, status: 200 },
    { description: 'CVV', method: 'GET', path: () => `/cards/${card.cardKey}/cvv?${new URLSearchParams({ expDate: card.expDate, securityKey })}`, status: 200 },
    { description: 'PAN', method: 'GET', path: () => `/cards/${card.cardKey}/pan?${new URLSearchParams({ expDate: card.expDate, securityKey })}`, status: 200 },
    { description: 'PIN change refused by validation', method: 'POST', path: () => `/cards/${card.cardKey}/pin/change`, body: { pin: '1234' }, status: 400 },
    { description: '3DS answer refused by validation', method: 'PUT', path: () => `/cards/${card.cardKey}/3ds/answer`, body: {}, status: 400 },
    { description: 'authorize refused by validation', method: 'POST', path: () => `/cards/${card.cardKey}/authorize`, body: {}, status: 400 },
  ];
  for (const row of cardData) {
    it(`card data, ${row.description}: Cache-Control no-store and Pragma no-cache`, async function () {
      const response = await api(gateway, acme, row.method, row.path(), row.body === undefined ? {} : { body: row.body });
      expect(response.status, JSON.stringify(response.body)).to.equal(row.status);
      expect(response.headers.get('cache-control')).to.equal('no-store');
      expect(response.headers.get('pragma')).to.equal('no-cache');
      expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
    });
  }

  it('logs the route pattern, not the URL, of a card-data request; other requests keep their URL', async function () {
    const cvvId = `headers-cvv-${Date.now()}`;
    const statusId = `headers-status-${Date.now()}`;
    await api(gateway, acme, 'GET', `/cards/${card.cardKey}/cvv?${new URLSearchParams({ expDate: card.expDate, securityKey })}`, { headers: { 'x-request-id': cvvId } });
    await api(gateway, acme, 'GET', `/cards/${card.cardKey}/status`, { headers: { 'x-request-id': statusId } });
    const cvvLine = await waitForRequestLog(gateway, cvvId);
    expect(cvvLine).to.include({ url: '/api/partner/cards/:id/cvv', route: '/api/partner/cards/:id/cvv', status: 200 });
    expect(JSON.stringify(cvvLine)).to.not.include(card.cardKey);
    const statusLine = await waitForRequestLog(gateway, statusId);
    expect(statusLine.url).to.equal(`/api/partner/cards/${card.cardKey}/status`);
  });
});
