import crypto from 'node:crypto';
import { expect } from 'chai';
import { Pool } from 'pg';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { pathMatches } from '../../sandbox/shared/faults';
import { api, cardBody, individualBody, sandboxControl, type ApiResponse } from '../support/api';
import { HIGH_RATE_LIMITS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { cardFixture } from '../support/card-fixture';
import { recordSecret } from '../support/secrets';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

type Upstream = 'issuer' | 'processing' | 'accounts';

/** How an upstream misbehaves, and what the partner must get for it (docs/errors.md). */
interface FaultMode {
  name: string;
  /** A sandbox fault (docs/upstreams.md section 3), or `refuse`: the upstream's port is closed. */
  fault: { mode: 'status'; status: number } | { mode: 'timeout' | 'reset' | 'malformed' } | 'refuse';
  status: number;
  code: string;
}

const MODES: FaultMode[] = [
  { name: 'refuses connections', fault: 'refuse', status: 502, code: 'upstream_error' },
  { name: 'resets mid-response', fault: { mode: 'reset' }, status: 502, code: 'upstream_error' },
  { name: 'answers past the timeout', fault: { mode: 'timeout' }, status: 504, code: 'upstream_timeout' },
  { name: 'answers 500', fault: { mode: 'status', status: 500 }, status: 502, code: 'upstream_error' },
  { name: 'answers malformed JSON', fault: { mode: 'malformed' }, status: 502, code: 'upstream_error' },
];

/** A partner and what a route case calls with: an individual, a virtual and a physical card, a securityKey and a PIN block. */
interface Fixture {
  partner: TestPartner;
  ada: any;
  virtualCard: any;
  physicalCard: any;
  securityKey: string;
  pinBlock: string;
}

/** A partner request on a representative route, and the upstream call it depends on. */
interface RouteCase {
  route: string;
  kind: 'proxied read' | 'orchestrated read' | 'orchestrated write' | 'proxied write';
  upstream: Upstream;
  /** What of a {@link Fixture} the request uses besides the partner (a card comes with its individual). */
  needs: 'nothing' | 'individual' | 'virtualCard' | 'physicalCard';
  /** The upstream method and path the fault is attached to. */
  upstreamCall: (f: Fixture) => { method: string; path: string };
  request: (f: Fixture) => { method: string; path: string; body?: unknown; idempotent?: boolean };
}

/**
 * Every kind of route against each upstream refusing connections, resetting mid-response, hanging
 * past UPSTREAM_TIMEOUT_MS, answering 500 and answering malformed JSON: the partner gets the
 * documented 502/504 problem, the gateway stays up, and nothing local is half-written.
 *
 * The sandboxes run in this process, each behind a TCP proxy that the "refuses connections" cases
 * cut (the port is then closed), so a card created before the fault still exists at the issuer.
 *
 * The "answers past the timeout" cases each wait UPSTREAM_TIMEOUT_MS for nothing: they run all at
 * once in the before hook (see runTimeoutCases), each on a partner of its own, and each route's
 * `it` reports its own. The other cases run one after the other, on one partner.
 */
describe('faults: every upstream failing, on every kind of route', function () {
  this.timeout(120_000);
  let sandboxes: Sandboxes;
  const proxies = {} as Record<Upstream, TcpProxy>;
  let gateway: GatewayProcess;
  /** The gateway's database (a pool: the timeout cases read it concurrently). */
  let db: Pool;
  /** The partner of the cases that run one after the other, and of the recovery and partial failures. */
  let main: Fixture;
  let partner: TestPartner;
  let ada: any;
  /** What each route's timeout case ended with (run in the before hook): nothing, or the error it failed with. */
  let timeoutOutcomes: Map<string, { error?: unknown }>;
  const injected: Record<string, number> = {};
  const cut = new Set<Upstream>();
  const cutLink = async (upstream: Upstream) => {
    await proxies[upstream].cut();
    cut.add(upstream);
  };

  const control = (upstream: Upstream) => sandboxes[upstream].url;

  before(async function () {
    sandboxes = await startSandboxes();
    for (const name of ['issuer', 'processing', 'accounts'] as const) {
      proxies[name] = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(sandboxes[name].url).port) });
    }
    gateway = await startGatewayProcess({
      env: {
        ...HIGH_RATE_LIMITS,
        ISSUER_URL: `http://127.0.0.1:${proxies.issuer.port}`,
        PROCESSING_URL: `http://127.0.0.1:${proxies.processing.port}`,
        ACCOUNTS_URL: `http://127.0.0.1:${proxies.accounts.port}`,
        UPSTREAM_TIMEOUT_MS: '1000',
      },
      // Its outbox is delivered by this gateway alone, to these sandboxes (other files' gateways run meanwhile).
      ownDatabase: true,
    });
    partner = await registerPartner(gateway, 'faults');
    db = new Pool({ connectionString: gateway.databaseUrl, max: 4 });
    main = { partner, ...(await cardFixture(gateway, partner, control('issuer'))) };
    ada = main.ada;
    timeoutOutcomes = await runTimeoutCases();
  });

  afterEach(async function () {
    await Promise.all([...cut].map((name) => proxies[name].restore()));
    cut.clear();
    await Promise.all((['issuer', 'processing', 'accounts'] as const).map((name) => sandboxControl(control(name), 'DELETE', '/__sandbox/faults')));
  });

  after(async function () {
    await db?.end();
    await gateway?.stop();
    for (const proxy of Object.values(proxies)) await proxy.close();
    await sandboxes?.close();
  });

  /** Everything a failed call must leave as it was: counts and the cards' state, for this partner. */
  async function localState(partnerId: string) {
    const result = await db.query(
      `SELECT (SELECT count(*) FROM users WHERE partner_id = $1)::int AS users,
              (SELECT count(*) FROM individual_onboardings WHERE partner_id = $1)::int AS onboardings,
              (SELECT count(*) FROM individual_onboardings WHERE partner_id = $1 AND provisioning = 'pending')::int AS pending,
              (SELECT count(*) FROM cards WHERE partner_id = $1)::int AS cards,
              (SELECT count(*) FROM card_status_history WHERE partner_id = $1)::int AS history,
              (SELECT count(*) FROM audit_log WHERE partner_id = $1 AND outcome = 'success')::int AS audit_success,
              (SELECT count(*) FROM outbox_events WHERE partner_id = $1)::int AS outbox,
              (SELECT count(*) FROM idempotency_keys WHERE partner_id = $1 AND state = 'in_progress')::int AS idempotency_in_progress,
              (SELECT coalesce(json_agg(json_build_array(card_key, status, status_code, embossed_name, nickname, exp_date) ORDER BY card_key), '[]'::json)
                 FROM cards WHERE partner_id = $1) AS cards_state`,
      [partnerId]
    );
    return result.rows[0];
  }

  const routes: RouteCase[] = [
    // issuer: proxied reads
    { route: 'get-card', needs: 'virtualCard', kind: 'proxied read', upstream: 'issuer', upstreamCall: (f) => ({ method: 'GET', path: `/cards/${f.virtualCard.cardKey}` }), request: (f) => ({ method: 'GET', path: `/cards/${f.virtualCard.cardKey}` }) },
    { route: 'get-card-limits', needs: 'virtualCard', kind: 'proxied read', upstream: 'issuer', upstreamCall: (f) => ({ method: 'GET', path: `/cards/${f.virtualCard.cardKey}/limits` }), request: (f) => ({ method: 'GET', path: `/cards/${f.virtualCard.cardKey}/limits` }) },
    { route: 'get-pin-encryption-key', needs: 'nothing', kind: 'proxied read', upstream: 'issuer', upstreamCall: () => ({ method: 'GET', path: '/pin-encryption-key' }), request: () => ({ method: 'GET', path: '/pin-encryption-key' }) },
    {
      route: 'get-card-cvv (audited read)',
      needs: 'virtualCard',
      kind: 'proxied read',
      upstream: 'issuer',
      upstreamCall: (f) => ({ method: 'GET', path: `/cards/${f.virtualCard.cardKey}/cvv` }),
      request: (f) => ({ method: 'GET', path: `/cards/${f.virtualCard.cardKey}/cvv?${new URLSearchParams({ expDate: f.virtualCard.expDate, securityKey: f.securityKey })}` }),
    },
    // issuer: orchestrated writes
    {
      route: 'issue-virtual-card',
      needs: 'individual',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: () => ({ method: 'POST', path: '/cards' }),
      request: (f) => ({ method: 'POST', path: `/individual/accounts/${f.ada._id}/cards/virtual`, body: cardBody(f.ada.clientID), idempotent: true }),
    },
    { route: 'lock-card', needs: 'virtualCard', kind: 'orchestrated write', upstream: 'issuer', upstreamCall: (f) => ({ method: 'POST', path: `/cards/${f.virtualCard.cardKey}/status` }), request: (f) => ({ method: 'POST', path: `/cards/${f.virtualCard.cardKey}/lock`, body: { expDate: f.virtualCard.expDate, reason: 'fault test' } }) },
    {
      route: 'set-card-emboss-name',
      needs: 'virtualCard',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: (f) => ({ method: 'PATCH', path: `/cards/${f.virtualCard.cardKey}/emboss-name` }),
      request: (f) => ({ method: 'PATCH', path: `/cards/${f.virtualCard.cardKey}/emboss-name`, body: { embossedName: 'FAULT.TEST' } }),
    },
    {
      route: 'replace-card',
      needs: 'physicalCard',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: (f) => ({ method: 'POST', path: `/cards/${f.physicalCard.cardKey}/replace` }),
      request: (f) => ({ method: 'POST', path: `/cards/${f.physicalCard.cardKey}/replace`, body: { expDate: f.physicalCard.expDate, reason: 'damaged' }, idempotent: true }),
    },
    {
      route: 'reissue-card',
      needs: 'virtualCard',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: (f) => ({ method: 'POST', path: `/cards/${f.virtualCard.cardKey}/reissue` }),
      request: (f) => ({ method: 'POST', path: `/cards/${f.virtualCard.cardKey}/reissue`, body: { expDate: f.virtualCard.expDate }, idempotent: true }),
    },
    {
      route: 'patch-card-limits',
      needs: 'virtualCard',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: (f) => ({ method: 'PATCH', path: `/cards/${f.virtualCard.cardKey}/limits` }),
      request: (f) => ({ method: 'PATCH', path: `/cards/${f.virtualCard.cardKey}/limits`, body: [{ name: 'dailyPurchase', value: 123 }] }),
    },
    {
      route: 'set-card-3ds-answer',
      needs: 'virtualCard',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: (f) => ({ method: 'PUT', path: `/cards/${f.virtualCard.cardKey}/3ds/answer` }),
      request: (f) => {
        const answer = `fault-answer-${crypto.randomBytes(4).toString('hex')}`;
        recordSecret('threeDsAnswer', answer);
        return { method: 'PUT', path: `/cards/${f.virtualCard.cardKey}/3ds/answer`, body: { answer } };
      },
    },
    { route: 'authorize-cardholder', needs: 'virtualCard', kind: 'orchestrated write', upstream: 'issuer', upstreamCall: (f) => ({ method: 'POST', path: `/cards/${f.virtualCard.cardKey}/authorize` }), request: (f) => ({ method: 'POST', path: `/cards/${f.virtualCard.cardKey}/authorize`, body: { pin: f.pinBlock } }) },
    // processing
    { route: 'list-individual-transactions', needs: 'individual', kind: 'orchestrated read', upstream: 'processing', upstreamCall: () => ({ method: 'GET', path: '/transactions' }), request: (f) => ({ method: 'GET', path: `/individual/accounts/${f.ada._id}/transactions` }) },
    {
      route: 'check-card-issuing-fee',
      needs: 'individual',
      kind: 'proxied write',
      upstream: 'processing',
      upstreamCall: () => ({ method: 'POST', path: '/fees' }),
      request: (f) => ({ method: 'POST', path: '/fees/card-issuing', body: { CustomerType: 'Consumer Debit', ProductType: 'R002', clientId: f.ada.clientID } }),
    },
    { route: 'list-delivery-methods', needs: 'nothing', kind: 'proxied read', upstream: 'processing', upstreamCall: () => ({ method: 'GET', path: '/delivery-methods' }), request: () => ({ method: 'GET', path: '/delivery-methods?country=DE' }) },
    // accounts
    {
      route: 'create-individual',
      needs: 'nothing',
      kind: 'orchestrated write',
      upstream: 'accounts',
      upstreamCall: () => ({ method: 'POST', path: '/accounts' }),
      request: () => ({ method: 'POST', path: '/individual/accounts', body: individualBody({ firstName: 'Faulty' }), idempotent: true }),
    },
  ];

  async function inject(upstream: Upstream, mode: FaultMode, call: { method: string; path: string }): Promise<void> {
    if (mode.fault === 'refuse') {
      await cutLink(upstream);
    } else {
      const created = await sandboxControl(control(upstream), 'POST', '/__sandbox/faults', { ...call, ...mode.fault, times: 0 });
      expect(created.id, JSON.stringify(created)).to.be.a('string');
    }
    injected[mode.name] = (injected[mode.name] ?? 0) + 1;
  }

  function expectProblem(response: ApiResponse, mode: FaultMode, upstream: Upstream): void {
    expect(response.status, JSON.stringify(response.body)).to.equal(mode.status);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(response.body).to.include({ code: mode.code, upstream, status: mode.status });
    if (mode.fault !== 'refuse' && mode.fault.mode === 'status') expect(response.body.upstreamCode).to.equal('SANDBOX_FAULT');
    const text = JSON.stringify(response.body);
    expect(text).to.not.include('Injected fault').and.not.include('this is not JSON').and.not.match(/at .*\.js:\d+/);
  }

  /** The fault that must leave everything as it was: the case's request carries an Idempotency-Key when the route is idempotent. */
  function prepare(routeCase: RouteCase, f: Fixture) {
    const request = routeCase.request(f);
    const idempotencyKey = request.idempotent ? `fault-${crypto.randomUUID()}` : undefined;
    return { request, idempotencyKey };
  }

  /** Sends the case's request as `partner`, with its Idempotency-Key and, when given, an `x-request-id`. */
  function send(partnerOfCase: TestPartner, prepared: ReturnType<typeof prepare>, requestId?: string): Promise<ApiResponse> {
    const { request, idempotencyKey } = prepared;
    return api(gateway, partnerOfCase, request.method, request.path, {
      body: request.body,
      headers: { ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}), ...(requestId ? { 'x-request-id': requestId } : {}) },
    });
  }

  /** Everything a case checks once the faulted request was answered: the problem, the gateway still up, the local state as it was. */
  async function expectSurvived(routeCase: RouteCase, mode: FaultMode, partnerOfCase: TestPartner, response: ApiResponse, before: any, idempotencyKey: string | undefined): Promise<void> {
    expectProblem(response, mode, routeCase.upstream);

    const health = await fetch(`${gateway.baseUrl}/api/partner/health-check`);
    expect(health.status, 'health check after the fault').to.equal(200);
    expect(gateway.child.exitCode, 'the gateway process is still running').to.equal(null);
    // A create-individual whose outcome is unknown (no usable answer: the upstream may have
    // created the account) keeps its pending record, invisible, for a retry with the same
    // operation id or the reconciler (issue 12). A refusal, or a refused connection, leaves nothing.
    const outcomeUnknown = routeCase.route === 'create-individual' && mode.fault !== 'refuse' && mode.fault.mode !== 'status';
    const expected = outcomeUnknown ? { ...before, users: before.users + 1, onboardings: before.onboardings + 1, pending: before.pending + 1 } : before;
    expect(await localState(partnerOfCase.id), 'local state after the failed call').to.deep.equal(expected);
    if (idempotencyKey) {
      // Released: the row stays, with its operation id, for the retry of the same request (migration 008).
      const kept = await db.query('SELECT state FROM idempotency_keys WHERE partner_id = $1 AND key = $2', [partnerOfCase.id, idempotencyKey]);
      expect(kept.rows, 'a 5xx releases the Idempotency-Key').to.deep.equal([{ state: 'released' }]);
    }
  }

  /** A new partner with what `routeCase` needs: an individual, and its card of the needed type (the securityKey and PIN block are the main fixture's). */
  async function fixtureFor(routeCase: RouteCase, name: string): Promise<Fixture> {
    const own = await registerPartner(gateway, name);
    const f: Fixture = { partner: own, ada: undefined, virtualCard: undefined, physicalCard: undefined, securityKey: main.securityKey, pinBlock: main.pinBlock };
    if (routeCase.needs === 'nothing') return f;
    const created = await api(gateway, own, 'POST', '/individual/accounts', { body: individualBody() });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    f.ada = created.body;
    if (routeCase.needs === 'individual') return f;
    const type = routeCase.needs === 'virtualCard' ? 'virtual' : 'physical';
    const card = await api(gateway, own, 'POST', `/individual/accounts/${f.ada._id}/cards/${type}`, { body: cardBody(f.ada.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    f[routeCase.needs] = card.body;
    return f;
  }

  /**
   * The "answers past the timeout" case of every route, all at once: each route on a partner of
   * its own (so its local state is its own) with the individual or card it needs, a `timeout`
   * fault on its upstream call, and its request sent with an `x-request-id` of its own once every
   * fault is in place. The sandboxes' records then show that each request met its own fault and
   * no other case's. Each case's checks are those of the cases that run one after the other
   * ({@link expectSurvived}); the outcome of each is kept for its route's `it`.
   */
  async function runTimeoutCases(): Promise<Map<string, { error?: unknown }>> {
    const mode = MODES.find((m) => m.fault !== 'refuse' && m.fault.mode === 'timeout')!;
    const outcomes = new Map<string, { error?: unknown }>();
    const lanes = await Promise.all(
      routes.map(async (routeCase, i) => {
        const f = await fixtureFor(routeCase, `faults-timeout-${i}`);
        return { routeCase, f, prepared: prepare(routeCase, f), call: routeCase.upstreamCall(f), requestId: `faults-timeout-${i}-${crypto.randomBytes(6).toString('hex')}`, before: await localState(f.partner.id) };
      })
    );
    // Every fault before any request, in this order (a sandbox applies the first fault that matches).
    const faults = [] as { lane: (typeof lanes)[number]; upstream: Upstream; method: string; path: string }[];
    for (const lane of lanes) {
      await inject(lane.routeCase.upstream, mode, lane.call);
      faults.push({ lane, upstream: lane.routeCase.upstream, ...lane.call });
    }
    try {
      const responses = await Promise.all(lanes.map((lane) => send(lane.f.partner, lane.prepared, lane.requestId)));
      const records = Object.fromEntries(
        await Promise.all((['issuer', 'processing', 'accounts'] as const).map(async (name) => [name, (await sandboxControl(control(name), 'GET', '/__sandbox/requests')) as { method: string; path: string; requestId: string | null }[]]))
      ) as Record<Upstream, { method: string; path: string; requestId: string | null }[]>;
      await Promise.all((['issuer', 'processing', 'accounts'] as const).map((name) => sandboxControl(control(name), 'DELETE', '/__sandbox/faults')));
      await Promise.all(
        lanes.map(async (lane, i) => {
          try {
            // Which fault each upstream call of this request met: its own, at least once, and no other case's.
            const met = (['issuer', 'processing', 'accounts'] as const).flatMap((name) =>
              records[name]
                .filter((r) => r.requestId === lane.requestId)
                .map((r) => faults.find((x) => x.upstream === name && x.method === r.method && pathMatches(x.path, r.path)))
                .filter((x) => x !== undefined)
            );
            expect(met.map((x) => x.lane.routeCase.route), `the faults its request met (${lane.requestId})`).to.include(lane.routeCase.route);
            expect([...new Set(met.map((x) => x.lane.routeCase.route))], 'its request met no other case\'s fault').to.deep.equal([lane.routeCase.route]);
            await expectSurvived(lane.routeCase, mode, lane.f.partner, responses[i], lane.before, lane.prepared.idempotencyKey);
            outcomes.set(lane.routeCase.route, {});
          } catch (error) {
            outcomes.set(lane.routeCase.route, { error });
          }
        })
      );
    } finally {
      await Promise.all((['issuer', 'processing', 'accounts'] as const).map((name) => sandboxControl(control(name), 'DELETE', '/__sandbox/faults')));
    }
    return outcomes;
  }

  for (const routeCase of routes) {
    describe(`${routeCase.route} (${routeCase.kind}, ${routeCase.upstream})`, function () {
      for (const mode of MODES) {
        it(`the ${routeCase.upstream} ${mode.name} → ${mode.status} ${mode.code}; the gateway stays up; nothing local is half-written`, async function () {
          if (mode.fault !== 'refuse' && mode.fault.mode === 'timeout') {
            // Ran in the before hook with the other routes' timeout cases (runTimeoutCases).
            const outcome = timeoutOutcomes.get(routeCase.route);
            expect(outcome, 'the timeout case ran').to.not.equal(undefined);
            if (outcome!.error) throw outcome!.error;
            return;
          }
          const prepared = prepare(routeCase, main);
          const before = await localState(partner.id);
          await inject(routeCase.upstream, mode, routeCase.upstreamCall(main));
          const response = await send(partner, prepared);
          await expectSurvived(routeCase, mode, partner, response, before, prepared.idempotencyKey);
        });
      }
    });
  }

  // Nested describes run after the matrix above, in order: the recovery (which retires cards) last but one.
  describe('recovery', function () {
    it('answers every one of these routes again once the upstreams are healthy (no restart)', async function () {
      // Replace and re-issue retire their card: last, so that the other routes still have it.
      const retiring = new Set(['replace-card', 'reissue-card']);
      for (const routeCase of [...routes.filter((r) => !retiring.has(r.route)), ...routes.filter((r) => retiring.has(r.route))]) {
        const request = routeCase.request(main);
        const response = await api(gateway, partner, request.method, request.path, { body: request.body });
        expect(response.status, `${routeCase.route}: ${JSON.stringify(response.body)}`).to.be.within(200, 299);
      }
      expect(gateway.child.exitCode).to.equal(null);
    });
  });

  describe('partial failures inside an orchestration', function () {
    it('replace: the issuer replaced the card but the read of the new card fails → 502, and the card stays usable under its new key', async function () {
      const card = (await api(gateway, partner, 'POST', `/individual/accounts/${ada._id}/cards/physical`, { body: cardBody(ada.clientID) })).body;
      const keysBefore = (await db.query('SELECT card_key FROM cards WHERE partner_id = $1', [partner.id])).rows.map((r) => r.card_key as string);
      await sandboxControl(control('issuer'), 'POST', '/__sandbox/faults', { method: 'GET', path: '/cards/*', mode: 'status', status: 500, times: 0 });
      injected['answers 500'] = (injected['answers 500'] ?? 0) + 1;
      const response = await api(gateway, partner, 'POST', `/cards/${card.cardKey}/replace`, { body: { expDate: card.expDate } });
      expect(response.status).to.equal(502);
      expect(response.body).to.include({ code: 'upstream_error', upstream: 'issuer' });
      await sandboxControl(control('issuer'), 'DELETE', '/__sandbox/faults');

      // The issuer retired the old key; our record moved to the new one before the failing read.
      const upstreamView = await fetch(`${control('issuer')}/cards/${card.cardKey}`);
      expect(upstreamView.status).to.equal(404);
      const keysAfter = (await db.query('SELECT card_key FROM cards WHERE partner_id = $1', [partner.id])).rows.map((r) => r.card_key as string);
      const added = keysAfter.filter((k) => !keysBefore.includes(k));
      expect(keysAfter.length, 'no card added or lost').to.equal(keysBefore.length);
      expect(added, 'the record is under the new key').to.have.length(1);
      expect(keysAfter).to.not.include(card.cardKey);
      const newKey = added[0];
      expect(response.body.cardKey, 'the problem names the new key').to.equal(newKey);
      const atIssuer = await sandboxControl(control('issuer'), 'GET', `/cards/${newKey}`);
      expect(atIssuer.cardKey).to.equal(newKey);

      // The old key is ours no more; the new one works: its first access reads the new card,
      // completes the replacement (mask, history, audit, card_created), then activates it.
      const old = await api(gateway, partner, 'GET', `/cards/${card.cardKey}/status`);
      expect(old.status).to.equal(404);
      expect(old.body).to.not.have.property('upstream');
      const activated = await api(gateway, partner, 'POST', `/cards/${newKey}/activate`, { body: { expDate: atIssuer.expDate } });
      expect(activated.status, JSON.stringify(activated.body)).to.equal(200);
      expect(activated.body).to.deep.equal({ cardKey: newKey, status: 'ACTIVE', statusCode: '00' });
      const row = (await db.query('SELECT card_mask, exp_date, replaced_from, issuer_check_due FROM cards WHERE card_key = $1', [newKey])).rows[0];
      expect(row).to.deep.equal({ card_mask: atIssuer.cardMask, exp_date: atIssuer.expDate, replaced_from: null, issuer_check_due: false });
      const history = await db.query('SELECT operation, new_status_code FROM card_status_history WHERE card_key = $1 ORDER BY id', [newKey]);
      expect(history.rows.map((h) => h.operation)).to.deep.equal(['card.replace', 'card.activate']);
      const audit = await db.query("SELECT details FROM audit_log WHERE operation = 'card.replace' AND outcome = 'success' AND target_id = $1", [card.cardKey]);
      expect(audit.rows).to.have.length(1);
      expect(audit.rows[0].details).to.include({ previousCardKey: card.cardKey, cardKey: newKey, reconciled: true });
      const created = await db.query("SELECT count(*)::int AS n FROM outbox_events WHERE kind = 'processing.card_created' AND payload->>'cardKey' = $1", [newKey]);
      expect(created.rows[0].n, 'the card_created webhook is queued once').to.equal(1);
    });

    it('replace with the processing system refusing connections: 200, the change is stored and the card_created webhook waits in the outbox until it is back', async function () {
      this.timeout(60_000);
      const card = (await api(gateway, partner, 'POST', `/individual/accounts/${ada._id}/cards/physical`, { body: cardBody(ada.clientID) })).body;
      await cutLink('processing');
      injected['refuses connections'] = (injected['refuses connections'] ?? 0) + 1;
      const response = await api(gateway, partner, 'POST', `/cards/${card.cardKey}/replace`, { body: { expDate: card.expDate } });
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      const newKey = response.body.cardKey as string;
      const outbox = async () =>
        (await db.query("SELECT delivered_at, attempts FROM outbox_events WHERE partner_id = $1 AND payload->>'cardKey' = $2", [partner.id, newKey])).rows;
      const [pending] = await outbox();
      expect(pending).to.include({ delivered_at: null, attempts: 1 });
      expect((await db.query('SELECT count(*)::int AS n FROM cards WHERE card_key = $1', [newKey])).rows[0].n).to.equal(1);

      await proxies.processing.restore();
      cut.delete('processing');
      // The retry's backoff has grown with every failed attempt: bring it due now (time passing),
      // then the background deliverer (every 5 s) must send it.
      await db.query("UPDATE outbox_events SET next_attempt_at = now() WHERE partner_id = $1 AND payload->>'cardKey' = $2 AND delivered_at IS NULL", [partner.id, newKey]);
      const deadline = Date.now() + 40_000;
      let delivered = false;
      while (!delivered && Date.now() < deadline) {
        delivered = (await outbox())[0].delivered_at !== null;
        if (!delivered) await new Promise((r) => setTimeout(r, 100));
      }
      expect(delivered, 'the background deliverer sent it once the processing system was back').to.equal(true);
      const received = await sandboxControl(control('processing'), 'GET', '/__sandbox/requests?path=/webhooks/card-created');
      expect(received.some((r: any) => r.body.cardKey === newKey && r.body.previousCardKey === card.cardKey)).to.equal(true);
    });
  });

  after(function () {
    const total = Object.values(injected).reduce((a, b) => a + b, 0);
    process.stdout.write(`      faults injected and survived: ${total} (${Object.entries(injected).map(([k, v]) => `${k} ${v}`).join(', ')})\n`);
  });
});
