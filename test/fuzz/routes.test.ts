import crypto from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { HIGH_RATE_LIMITS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret, redactRecordedSecrets } from '../support/secrets';
import { closeSender, GATEWAY_REFUSALS, loadRoutes, materialize, requestArbitrary, send, type FuzzContext, type FuzzRequest, type FuzzResponse, type FuzzRoute, type SentRequest } from './fuzz-routes';
import { rsaSecurityKey } from '../support/keys';

/** Cases per route: FUZZ_RUNS (default 200; `npm run fuzz` runs 2000). */
const RUNS = Number(process.env.FUZZ_RUNS || 200);
/** Seed of the generators: FUZZ_SEED reproduces a run (printed with every failure). */
const SEED = Number(process.env.FUZZ_SEED || crypto.randomInt(1, 2 ** 31 - 1));
const CONCURRENCY = 8;
/** Requests between two reads of the sandboxes' request logs (they keep the newest 5000). */
const CHUNK = 400;

interface Violation {
  rule: string;
  request: SentRequest;
  category: string;
  status: number;
  body: string;
}

/**
 * Property-based tests over every route of config/gateway.config.yml: for valid, near-valid and
 * invalid paths, queries, bodies, media types, tokens and methods derived from each route's
 * schemas (gateway/schemas), the gateway never answers 5xx, always answers errors as problem
 * documents, and never calls an upstream for a request it refused itself.
 */
describe(`fuzz: every route, ${RUNS} generated requests each`, function () {
  this.timeout(Math.max(120_000, RUNS * 1000));
  const routes = loadRoutes();
  let gateway: GatewayProcess;
  let acme: TestPartner;
  let globex: TestPartner;
  let upstreams: { issuer: string; processing: string; accounts: string };
  const base = {} as Omit<FuzzContext, 'card'>;
  const tokens = { valid: '', other: '', signedAt: 0 };
  const cases: Record<string, number> = {};
  const categories: Record<string, number> = {};

  async function refreshTokens(): Promise<void> {
    // One token per partner, reused (the gateway caches verified tokens); renewed before its 300 s lifetime ends.
    if (Date.now() - tokens.signedAt < 240_000) return;
    tokens.valid = await acme.token({ ttlSeconds: 300 });
    tokens.other = await globex.token({ ttlSeconds: 300 });
    tokens.signedAt = Date.now();
  }

  before(async function () {
    this.timeout(120_000);
    gateway = await startGatewayProcess({ env: HIGH_RATE_LIMITS });
    upstreams = sandboxUrls(gateway);
    acme = await registerPartner(gateway, 'fuzz-acme');
    globex = await registerPartner(gateway, 'fuzz-globex');
    const ada = (await api(gateway, acme, 'POST', '/individual/accounts', { body: individualBody() })).body;
    const grace = (await api(gateway, globex, 'POST', '/individual/accounts', { body: individualBody({ firstName: 'Grace' }) })).body;
    const graceCard = (await api(gateway, globex, 'POST', `/individual/accounts/${grace._id}/cards/virtual`, { body: cardBody(grace.clientID) })).body;
    const securityKey = rsaSecurityKey();
    recordSecret('securityKey', securityKey);
    const pinKey = await sandboxControl(upstreams.issuer, 'GET', '/pin-encryption-key');
    const pinBlocks = ['4921', '1234', '000000', '987654321012'].map((pin) => {
      const block = crypto.publicEncrypt({ key: pinKey.publicKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(pin)).toString('base64');
      recordSecret('pinBlock', block);
      return block;
    });
    const eventOf = async (partner: TestPartner) => (await api(gateway, partner, 'GET', '/events?type=individual.created&limit=1')).body.data[0].id as string;
    Object.assign(base, {
      individualId: ada._id,
      clientID: ada.clientID,
      otherIndividualId: grace._id,
      otherCardKey: graceCard.cardKey,
      eventId: await eventOf(acme),
      otherEventId: await eventOf(globex),
      securityKey,
      pinBlocks,
    });
    await refreshTokens();
  });

  after(async function () {
    closeSender();
    await gateway?.stop();
    const total = Object.values(cases).reduce((a, b) => a + b, 0);
    process.stdout.write(`      fuzz: ${total} requests over ${Object.keys(cases).length} routes (min ${Math.min(...Object.values(cases))} per route), seed ${SEED}\n`);
    process.stdout.write(`      fuzz: by kind ${Object.entries(categories).sort(([, a], [, b]) => b - a).map(([k, n]) => `${k} ${n}`).join(', ')}\n`);
  });

  it(`covers every route of the gateway config (${routes.length})`, function () {
    expect(routes.length).to.be.at.least(47);
    expect(new Set(routes.map((r) => `${r.method} ${r.path}`)).size).to.equal(routes.length);
  });

  /** Whether the problem says the gateway answered on its own (no upstream member, a refusal code). */
  const refusedByGateway = (response: FuzzResponse) =>
    response.status >= 400 && response.status < 500 && response.body && typeof response.body === 'object' && response.body.upstream === undefined && GATEWAY_REFUSALS.test(String(response.body.code));

  /** The documented 5xx of a valid request: PIN change and force PIN lock are not supported by the issuer (docs/cards.md). */
  const knownLimitation = (route: FuzzRoute, response: FuzzResponse) =>
    (route.name === 'change-card-pin' || route.name === 'force-card-pin-lock') && response.status === 502 && response.body?.upstreamCode === 'OPERATION_NOT_SUPPORTED';

  for (const route of routes) {
    it(`${route.method} ${route.path} (${route.name}): never 5xx, errors are problems, no upstream call when the gateway refuses`, async function () {
      // Each card route fuzzes its own card, so that closing or replacing it leaves the others alone.
      let card = { cardKey: 'CK0000000000000000', expDate: `12/${new Date().getUTCFullYear() + 4}` };
      if (route.ownership?.resource === 'card') {
        const type = route.name === 'activate-card' || route.name === 'replace-card' ? 'physical' : 'virtual';
        const issued = await api(gateway, acme, 'POST', `/individual/accounts/${base.individualId}/cards/${type}`, { body: cardBody(base.clientID) });
        expect(issued.status, JSON.stringify(issued.body)).to.equal(201);
        card = { cardKey: issued.body.cardKey, expDate: issued.body.expDate };
      }
      const ctx: FuzzContext = { ...base, card };
      const samples = fc.sample(requestArbitrary(route, ctx), { numRuns: RUNS, seed: SEED });
      const violations: Violation[] = [];
      const refused: { requestId: string; sent: SentRequest; category: string; response: FuzzResponse }[] = [];
      const tag = crypto.randomBytes(3).toString('hex');

      const runOne = async (request: FuzzRequest, index: number) => {
        await refreshTokens();
        const requestId = `fz-${tag}-${index}`;
        const sent = materialize(route, request, ctx, tokens, requestId);
        let response: FuzzResponse;
        try {
          response = await send(gateway.baseUrl, sent);
        } catch (err) {
          violations.push({ rule: `no answer (${(err as Error).message})`, request: sent, category: request.category, status: 0, body: '' });
          return;
        }
        if (response.status >= 500 && !knownLimitation(route, response)) {
          violations.push({ rule: 'never a 5xx', request: sent, category: request.category, status: response.status, body: response.text.slice(0, 300) });
        }
        if (response.status >= 400 && sent.method !== 'HEAD') {
          if (!/^application\/problem\+json/.test(response.contentType) || typeof response.body?.code !== 'string') {
            violations.push({ rule: 'errors are problem documents', request: sent, category: request.category, status: response.status, body: response.text.slice(0, 300) });
          } else if (response.body.requestId !== requestId) {
            violations.push({ rule: 'the problem carries the request id', request: sent, category: request.category, status: response.status, body: response.text.slice(0, 300) });
          }
        }
        if (refusedByGateway(response)) refused.push({ requestId, sent, category: request.category, response });
        // Replace and re-issue move the route's card to a new key: follow it.
        if ((route.name === 'replace-card' || route.name === 'reissue-card') && response.status < 300 && typeof response.body?.cardKey === 'string') {
          ctx.card = { cardKey: response.body.cardKey, expDate: response.body.expDate ?? ctx.card.expDate };
        }
      };

      const checkUpstreams = async () => {
        const received = new Set<string>();
        for (const url of Object.values(upstreams)) {
          for (const r of await sandboxControl(url, 'GET', '/__sandbox/requests')) if (r.requestId) received.add(r.requestId);
          await sandboxControl(url, 'DELETE', '/__sandbox/requests');
        }
        for (const r of refused.splice(0)) {
          if (received.has(r.requestId)) {
            violations.push({ rule: `no upstream call after a gateway refusal (${r.response.status} ${r.response.body.code})`, request: r.sent, category: r.category, status: r.response.status, body: r.response.text.slice(0, 300) });
          }
        }
      };

      for (const u of Object.values(upstreams)) await sandboxControl(u, 'DELETE', '/__sandbox/requests');
      for (let start = 0; start < samples.length; start += CHUNK) {
        const chunk = samples.slice(start, start + CHUNK);
        let next = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next < chunk.length) {
              const index = next++;
              await runOne(chunk[index], start + index);
            }
          })
        );
        await checkUpstreams();
      }
      cases[route.name] = samples.length;
      for (const sample of samples) categories[sample.category] = (categories[sample.category] ?? 0) + 1;

      if (violations.length > 0) {
        // One example per rule, status and category, with everything needed to replay it.
        const distinct = new Map<string, Violation>();
        for (const v of violations) distinct.set(`${v.rule}|${v.status}|${v.category}`, distinct.get(`${v.rule}|${v.status}|${v.category}`) ?? v);
        const report = [...distinct.values()]
          .map((v) => {
            const headers = { ...v.request.headers };
            if (headers.authorization) headers.authorization = 'Bearer <token>';
            return `  - ${v.rule}: ${v.status} for ${v.request.method} ${v.request.path} headers=${JSON.stringify(headers)} body=${JSON.stringify((v.request.body ?? '').slice(0, 200))} → ${v.body}`;
          })
          .join('\n');
        expect.fail(`${violations.length} of ${samples.length} requests broke a rule (FUZZ_SEED=${SEED}):\n${redactRecordedSecrets(report)}`);
      }
    });
  }
});
