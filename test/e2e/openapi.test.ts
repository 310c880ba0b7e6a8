import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import YAML from 'yaml';
import { api, cardBody, individualBody, type ApiResponse } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { adminCall, registerPartner, type TestPartner } from '../support/partners';
import { rsaSecurityKey } from '../support/keys';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SHIPPED_CONFIG = path.join(ROOT, 'config', 'gateway.config.yml');
const DOCUMENT_ID = 'https://partner-gateway.dev/openapi.json';

type Json = Record<string, any>;

/** Every operation of a document as `METHOD /api/partner/path` → operation. */
function operationsOf(document: Json): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const [p, item] of Object.entries<Json>(document.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) out.set(`${method.toUpperCase()} ${document.servers[0].url}${p}`, op);
  }
  return out;
}

/** The routes of a gateway.config.yml, read straight from the YAML (not through the generator). */
function configuredRoutes(file: string): Set<string> {
  const config = YAML.parse(fs.readFileSync(file, 'utf8')) as Json;
  const routes = new Set<string>();
  for (const definition of Object.values<Json>(config.apiEndpoints)) {
    for (const entry of [definition].flat()) {
      for (const routePath of [entry.paths ?? entry.path].flat() as string[]) {
        for (const method of [entry.methods].flat().flatMap((m: string) => m.split(','))) {
          routes.add(`${method.trim().toUpperCase()} ${routePath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')}`);
        }
      }
    }
  }
  return routes;
}

describe('e2e: the OpenAPI document (GET /api/partner/openapi.json)', function () {
  this.timeout(120_000);
  let gateway: Gateway;
  let response: Response;
  let document: Json;
  let operations: Map<string, Json>;

  before(async function () {
    gateway = await sharedGateway();
    response = await fetch(`${gateway.baseUrl}/api/partner/openapi.json`);
    document = (await response.json()) as Json;
    operations = operationsOf(document);
  });


  it('is served without a token as JSON, cacheable for 5 minutes, with an ETag', async function () {
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^application\/json/);
    expect(response.headers.get('cache-control')).to.equal('public, max-age=300');
    const etag = response.headers.get('etag')!;
    expect(etag).to.match(/^"[A-Za-z0-9_-]+"$/);
    expect(document.openapi).to.equal('3.1.0');

    const again = await fetch(`${gateway.baseUrl}/api/partner/openapi.json`, { headers: { 'if-none-match': etag } });
    expect(again.status).to.equal(304);
    expect(again.headers.get('cache-control')).to.equal('public, max-age=300');
    const gzipped = await fetch(`${gateway.baseUrl}/api/partner/openapi.json`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gzipped.headers.get('content-encoding')).to.equal('gzip');
    expect(await gzipped.json()).to.deep.equal(document);
  });

  it('lists every route of gateway.config.yml, and only those', function () {
    const configured = configuredRoutes(SHIPPED_CONFIG);
    expect([...operations.keys()].sort()).to.deep.equal([...configured].sort());
    expect(configured.size).to.be.greaterThan(40);
  });

  it('has every operation routed: without a token each answers 401 token_missing (public ones 200), never route_not_found', async function () {
    const publicRoutes: string[] = [];
    for (const [route, op] of operations) {
      const [method, template] = route.split(' ');
      const url = template.replace(/\{(\w+)\}/g, (_m, name: string) => {
        const parameter = (op.parameters as Json[]).find((p) => p.name === name && p.in === 'path')!;
        return encodeURIComponent(String(parameter.example));
      });
      const answer = await fetch(`${gateway.baseUrl}${url}`, { method });
      if (op.security.length === 0) {
        expect(answer.status, route).to.equal(200);
        publicRoutes.push(route);
      } else {
        expect(answer.status, route).to.equal(401);
        expect(((await answer.json()) as Json).code, route).to.equal('token_missing');
      }
    }
    expect(publicRoutes.sort()).to.deep.equal(['GET /api/partner/docs', 'GET /api/partner/health-check', 'GET /api/partner/openapi.json']);
  });

  it('passes redocly lint (recommended rules, redocly.yaml) with no error and no warning', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-openapi-'));
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(document, null, 2));
    let stdout: string;
    try {
      ({ stdout } = await promisify(execFile)('npx', ['--no-install', 'redocly', 'lint', '--config', path.join(ROOT, 'redocly.yaml'), '--format=json', file], {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        maxBuffer: 16 * 1024 * 1024,
      }));
    } catch (err) {
      // redocly exits 1 on errors; its JSON report is still on stdout.
      stdout = (err as { stdout?: string }).stdout ?? '';
      if (!stdout.trim().startsWith('{')) throw err;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`);
    expect(problems, problems.join('\n')).to.deep.equal([]);
    expect(report.totals).to.include({ errors: 0, warnings: 0 });

    // operation-4xx-response, which redocly.yaml turns off for the health check's sake (it answers
    // only 200): every other operation documents at least one 4XX.
    const without4xx = Object.entries(document.paths as Json).flatMap(([p, item]) =>
      Object.entries(item as Json)
        .filter(([, op]) => !Object.keys((op as Json).responses).some((status) => /^4(\d\d|XX)$/.test(status)))
        .map(([method]) => `${method.toUpperCase()} ${p}`)
    );
    expect(without4xx).to.deep.equal(['GET /health-check']);
  });

  describe('real answers match the response schemas the document gives (AJV)', function () {
    let acme: TestPartner;
    let ajv: Ajv;
    const validators = new Map<string, ValidateFunction>();

    /** The validator of an operation's answer with `status`, from the served document. */
    function schemaOf(operationId: string, status: number): ValidateFunction {
      const key = `${operationId} ${status}`;
      let validate = validators.get(key);
      if (validate) return validate;
      const op = [...operations.values()].find((o) => o.operationId === operationId);
      expect(op, operationId).to.not.equal(undefined);
      let answer = op!.responses[String(status)];
      expect(answer, key).to.not.equal(undefined);
      if (answer.$ref) answer = document.components.responses[answer.$ref.split('/').pop()];
      const content = answer.content['application/json'] ?? answer.content['application/problem+json'];
      // The document's `#/components/...` references, made absolute to the document added below.
      validate = ajv.compile(JSON.parse(JSON.stringify(content.schema).replace(/"#\/components\//g, `"${DOCUMENT_ID}#/components/`)));
      validators.set(key, validate);
      return validate;
    }

    function expectValid(operationId: string, answer: ApiResponse, status: number): any {
      expect(answer.status, `${operationId}: ${JSON.stringify(answer.body)}`).to.equal(status);
      const validate = schemaOf(operationId, status);
      expect(validate(answer.body), `${operationId}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(answer.body)}`).to.equal(true);
      return answer.body;
    }

    before(async function () {
      // Not strict: the document's request schemas carry the gateway's x- keywords; only response schemas are compiled here.
      ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
      addFormats(ajv, ['date', 'date-time', 'email', 'uri']);
      ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: document.components.schemas } });
      acme = await registerPartner(gateway, 'acme-openapi');
      await adminCall(gateway, 'PATCH', `/admin/partners/${acme.id}`, { processingEnabled: true });
      await adminCall(gateway, 'POST', `/admin/partners/${acme.id}/tenants`, { name: 'Acme Corporate' });
    });

    it('individuals, cards, status changes, limits, secrets, lists, fees and delivery', async function () {
      const call = (method: string, p: string, body?: unknown) => api(gateway, acme, method, p, { body });
      const individual = expectValid('create-individual', await call('POST', '/individual/accounts', individualBody()), 201);
      expectValid('get-individual', await call('GET', `/individual/accounts/${individual._id}`), 200);
      expectValid('list-individuals', await call('GET', '/individual/accounts?limit=5'), 200);
      const me = expectValid('me', await call('GET', '/me'), 200);
      expect(me.b2bAccounts).to.have.length(1);
      expect(me.individuals).to.have.length(1);

      const card = expectValid('issue-virtual-card', await call('POST', `/individual/accounts/${individual._id}/cards/virtual`, cardBody(individual.clientID)), 201);
      const physical = expectValid('issue-physical-card', await call('POST', `/individual/accounts/${individual._id}/cards/physical`, cardBody(individual.clientID)), 201);
      expect(physical.status).to.equal('LOCKED');
      expectValid('list-individual-cards', await call('GET', `/individual/accounts/${individual._id}/cards`), 200);
      expectValid('get-card', await call('GET', `/cards/${card.cardKey}`), 200);
      expectValid('get-card-status', await call('GET', `/cards/${card.cardKey}/status`), 200);
      expectValid('lock-card', await call('POST', `/cards/${card.cardKey}/lock`, { expDate: card.expDate, reason: 'openapi test' }), 200);
      expectValid('unlock-card', await call('POST', `/cards/${card.cardKey}/unlock`, { expDate: card.expDate }), 200);
      expectValid('set-card-nickname', await call('PATCH', `/cards/${card.cardKey}/nickname`, { nickname: 'Travel' }), 200);
      expectValid('set-card-3ds-phone', await call('PUT', `/cards/${card.cardKey}/3ds/phone`, { phoneNumber: '+447700900123' }), 200);
      expectValid('get-card-limits', await call('GET', `/cards/${card.cardKey}/limits`), 200);
      expectValid('set-card-limit', await call('PUT', `/cards/${card.cardKey}/limits/dailyPurchase`, { name: 'dailyPurchase', value: 900 }), 200);
      expectValid('patch-card-limits', await call('PATCH', `/cards/${card.cardKey}/limits`, [{ name: 'monthlyPurchase', value: 5000 }]), 200);
      expectValid('get-card-limit', await call('GET', `/cards/${card.cardKey}/limits/dailyPurchase`), 200);
      expectValid('get-card-limit-available', await call('GET', `/cards/${card.cardKey}/limits/dailyPurchase/available`), 200);

      const securityKey = rsaSecurityKey();
      const secretQuery = new URLSearchParams({ expDate: card.expDate, securityKey });
      expectValid('get-card-cvv', await call('GET', `/cards/${card.cardKey}/cvv?${secretQuery}`), 200);
      expectValid('get-card-pan', await call('GET', `/cards/${card.cardKey}/pan?${secretQuery}`), 200);
      expectValid('get-pin-encryption-key', await call('GET', '/pin-encryption-key'), 200);

      expectValid('replace-card', await call('POST', `/cards/${physical.cardKey}/replace`, { expDate: card.expDate, reason: 'damaged' }), 200);
      expectValid('reissue-card', await call('POST', `/cards/${card.cardKey}/reissue`, { expDate: card.expDate }), 201);
      expectValid('list-cards', await call('GET', '/cards?limit=10'), 200);
      const audit = expectValid('list-individual-audit-logs', await call('GET', `/individual/accounts/${individual._id}/audit-logs`), 200);
      expect(audit.data.length).to.be.greaterThan(5);
      expectValid('list-individual-card-status-history', await call('GET', `/individual/accounts/${individual._id}/card-status-history`), 200);
      const transactions = expectValid('list-individual-transactions', await call('GET', `/individual/accounts/${individual._id}/transactions`), 200);
      expect(transactions.pagination).to.include({ page: 1, limit: 20 });

      expectValid('check-card-issuing-fee', await call('POST', '/fees/card-issuing', { CustomerType: 'Consumer Debit', ProductType: 'R001', clientId: individual.clientID }), 200);
      expectValid('list-delivery-methods', await call('GET', '/delivery-methods?country=DE'), 200);

      // Every type of event the changes above wrote, in the log's answers and as the webhooks section's payloads.
      const events = expectValid('list-events', await call('GET', '/events?limit=100'), 200);
      expect(new Set(events.data.map((e: { type: string }) => e.type))).to.deep.equal(new Set(['individual.created', 'card.created', 'card.status_changed', 'card.updated']));
      for (const event of events.data) {
        expectValid('get-event', await call('GET', `/events/${event.id}`), 200);
        const webhook = document.webhooks[event.type].post.requestBody.content['application/json'].schema.$ref as string;
        const validate = ajv.getSchema(`${DOCUMENT_ID}${webhook}`)!;
        expect(validate(event), `${event.type}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
      }
    });

    it('problems: a refused token (401), an invalid body (400) and a card in the wrong state (409)', async function () {
      const anonymous = await api(gateway, null, 'GET', '/me');
      expect(expectValid('me', anonymous, 401).code).to.equal('token_missing');
      const invalid = expectValid('create-individual', await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody({ country: 'XX', extra: 1 }) }), 400);
      expect(invalid.invalidParams.map((p: Json) => p.name).sort()).to.deep.equal(['country', 'extra']);
      const individual = (await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody() })).body;
      const card = (await api(gateway, acme, 'POST', `/individual/accounts/${individual._id}/cards/physical`, { body: cardBody(individual.clientID) })).body;
      const refused = expectValid('lock-card', await api(gateway, acme, 'POST', `/cards/${card.cardKey}/lock`, { body: { expDate: card.expDate } }), 409);
      expect(refused).to.include({ code: 'invalid_transition', cardStatus: 'LOCKED', statusCode: 'I1' });
    });
  });
});
