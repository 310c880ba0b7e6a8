import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { startSandboxes, type Sandboxes } from '../../sandbox';
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

/** A partner request on a representative route, and the upstream call it depends on. */
interface RouteCase {
  route: string;
  kind: 'proxied read' | 'orchestrated read' | 'orchestrated write' | 'proxied write';
  upstream: Upstream;
  /** The upstream method and path the fault is attached to. */
  upstreamCall: () => { method: string; path: string };
  request: () => { method: string; path: string; body?: unknown; idempotent?: boolean };
}

/**
 * Every kind of route against each upstream refusing connections, resetting mid-response, hanging
 * past UPSTREAM_TIMEOUT_MS, answering 500 and answering malformed JSON: the partner gets the
 * documented 502/504 problem, the gateway stays up, and nothing local is half-written.
 *
 * The sandboxes run in this process, each behind a TCP proxy that the "refuses connections" cases
 * cut (the port is then closed), so a card created before the fault still exists at the issuer.
 */
describe('faults: every upstream failing, on every kind of route', function () {
  this.timeout(120_000);
  let sandboxes: Sandboxes;
  const proxies = {} as Record<Upstream, TcpProxy>;
  let gateway: GatewayProcess;
  let partner: TestPartner;
  let db: Client;
  let ada: any;
  let virtualCard: any;
  let physicalCard: any;
  let securityKey: string;
  let pinBlock: string;
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
    db = new Client({ connectionString: gateway.databaseUrl });
    await db.connect();
    ({ ada, virtualCard, physicalCard, securityKey, pinBlock } = await cardFixture(gateway, partner, control('issuer')));
  });

  afterEach(async function () {
    for (const name of cut) await proxies[name].restore();
    cut.clear();
    for (const name of ['issuer', 'processing', 'accounts'] as const) await sandboxControl(control(name), 'DELETE', '/__sandbox/faults');
  });

  after(async function () {
    await db?.end();
    await gateway?.stop();
    for (const proxy of Object.values(proxies)) await proxy.close();
    await sandboxes?.close();
  });

  /** Everything a failed call must leave as it was: counts and the cards' state, for this partner. */
  async function localState() {
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
      [partner.id]
    );
    return result.rows[0];
  }

  const routes: RouteCase[] = [
    // issuer: proxied reads
    { route: 'get-card', kind: 'proxied read', upstream: 'issuer', upstreamCall: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}` }), request: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}` }) },
    { route: 'get-card-limits', kind: 'proxied read', upstream: 'issuer', upstreamCall: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}/limits` }), request: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}/limits` }) },
    { route: 'get-pin-encryption-key', kind: 'proxied read', upstream: 'issuer', upstreamCall: () => ({ method: 'GET', path: '/pin-encryption-key' }), request: () => ({ method: 'GET', path: '/pin-encryption-key' }) },
    {
      route: 'get-card-cvv (audited read)',
      kind: 'proxied read',
      upstream: 'issuer',
      upstreamCall: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}/cvv` }),
      request: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}/cvv?${new URLSearchParams({ expDate: virtualCard.expDate, securityKey })}` }),
    },
    // issuer: orchestrated writes
    {
      route: 'issue-virtual-card',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: () => ({ method: 'POST', path: '/cards' }),
      request: () => ({ method: 'POST', path: `/individual/accounts/${ada._id}/cards/virtual`, body: cardBody(ada.clientID), idempotent: true }),
    },
    { route: 'lock-card', kind: 'orchestrated write', upstream: 'issuer', upstreamCall: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/status` }), request: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/lock`, body: { expDate: virtualCard.expDate, reason: 'fault test' } }) },
    {
      route: 'set-card-emboss-name',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: () => ({ method: 'PATCH', path: `/cards/${virtualCard.cardKey}/emboss-name` }),
      request: () => ({ method: 'PATCH', path: `/cards/${virtualCard.cardKey}/emboss-name`, body: { embossedName: 'FAULT.TEST' } }),
    },
    {
      route: 'replace-card',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: () => ({ method: 'POST', path: `/cards/${physicalCard.cardKey}/replace` }),
      request: () => ({ method: 'POST', path: `/cards/${physicalCard.cardKey}/replace`, body: { expDate: physicalCard.expDate, reason: 'damaged' }, idempotent: true }),
    },
    {
      route: 'reissue-card',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/reissue` }),
      request: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/reissue`, body: { expDate: virtualCard.expDate }, idempotent: true }),
    },
    {
      route: 'patch-card-limits',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: () => ({ method: 'PATCH', path: `/cards/${virtualCard.cardKey}/limits` }),
      request: () => ({ method: 'PATCH', path: `/cards/${virtualCard.cardKey}/limits`, body: [{ name: 'dailyPurchase', value: 123 }] }),
    },
    {
      route: 'set-card-3ds-answer',
      kind: 'orchestrated write',
      upstream: 'issuer',
      upstreamCall: () => ({ method: 'PUT', path: `/cards/${virtualCard.cardKey}/3ds/answer` }),
      request: () => {
        const answer = `fault-answer-${crypto.randomBytes(4).toString('hex')}`;
        recordSecret('threeDsAnswer', answer);
        return { method: 'PUT', path: `/cards/${virtualCard.cardKey}/3ds/answer`, body: { answer } };
      },
    },
    { route: 'authorize-cardholder', kind: 'orchestrated write', upstream: 'issuer', upstreamCall: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/authorize` }), request: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/authorize`, body: { pin: pinBlock } }) },
    // processing
    { route: 'list-individual-transactions', kind: 'orchestrated read', upstream: 'processing', upstreamCall: () => ({ method: 'GET', path: '/transactions' }), request: () => ({ method: 'GET', path: `/individual/accounts/${ada._id}/transactions` }) },
    {
      route: 'check-card-issuing-fee',
      kind: 'proxied write',
      upstream: 'processing',
      upstreamCall: () => ({ method: 'POST', path: '/fees' }),
      request: () => ({ method: 'POST', path: '/fees/card-issuing', body: { CustomerType: 'Consumer Debit', ProductType: 'R002', clientId: ada.clientID } }),
    },
    { route: 'list-delivery-methods', kind: 'proxied read', upstream: 'processing', upstreamCall: () => ({ method: 'GET', path: '/delivery-methods' }), request: () => ({ method: 'GET', path: '/delivery-methods?country=DE' }) },
    // accounts
    {
      route: 'create-individual',
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

  for (const routeCase of routes) {
    describe(`${routeCase.route} (${routeCase.kind}, ${routeCase.upstream})`, function () {
      for (const mode of MODES) {
        it(`the ${routeCase.upstream} ${mode.name} → ${mode.status} ${mode.code}; the gateway stays up; nothing local is half-written`, async function () {
          const request = routeCase.request();
          const idempotencyKey = request.idempotent ? `fault-${crypto.randomUUID()}` : undefined;
          const before = await localState();
          await inject(routeCase.upstream, mode, routeCase.upstreamCall());
          const response = await api(gateway, partner, request.method, request.path, {
            body: request.body,
            headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
          });
          expectProblem(response, mode, routeCase.upstream);

          const health = await fetch(`${gateway.baseUrl}/api/partner/health-check`);
          expect(health.status, 'health check after the fault').to.equal(200);
          expect(gateway.child.exitCode, 'the gateway process is still running').to.equal(null);
          // A create-individual whose outcome is unknown (no usable answer: the upstream may have
          // created the account) keeps its pending record, invisible, for a retry with the same
          // operation id or the reconciler (issue 12). A refusal, or a refused connection, leaves nothing.
          const outcomeUnknown = routeCase.route === 'create-individual' && mode.fault !== 'refuse' && mode.fault.mode !== 'status';
          const expected = outcomeUnknown ? { ...before, users: before.users + 1, onboardings: before.onboardings + 1, pending: before.pending + 1 } : before;
          expect(await localState(), 'local state after the failed call').to.deep.equal(expected);
          if (idempotencyKey) {
            // Released: the row stays, with its operation id, for the retry of the same request (migration 008).
            const kept = await db.query('SELECT state FROM idempotency_keys WHERE partner_id = $1 AND key = $2', [partner.id, idempotencyKey]);
            expect(kept.rows, 'a 5xx releases the Idempotency-Key').to.deep.equal([{ state: 'released' }]);
          }
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
        const request = routeCase.request();
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
