import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { api, cardBody, individualBody, type ApiResponse } from '../support/api';
import { HIGH_RATE_LIMITS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { cardFixture } from '../support/card-fixture';
import { recordSecret } from '../support/secrets';
import { startTamperingUpstream, type TamperingUpstream } from '../support/tampering-upstream';
import { rsaKeyPair } from '../support/keys';

type Upstream = 'issuer' | 'processing' | 'accounts';

/** The code the security review saw echoed (16 digits, not Luhn-valid) and a Luhn-valid sandbox PAN. */
const REVIEW_CODE = 'PAN_5355709999999995';
const PAN = '5355709999999994';
const PAN_GROUPED = '5355 7099 9999 9994';
const CODES = [REVIEW_CODE, `PAN_${PAN}`];

/** Every digit run of 13 or more in a text (a PAN, grouped or not, has one once separators are dropped). */
const digitsOf = (text: string) => text.replace(/[ -]/g, '');

/**
 * A hostile or broken upstream must not hand a card number to the partner (issue 11, item 5): the
 * gateway runs against the real sandboxes behind a tampering HTTP proxy that answers, or rewrites,
 * chosen calls; every route kind is tried.
 */
describe('e2e: card numbers from a hostile upstream never reach the partner nor the database', function () {
  this.timeout(120_000);
  let sandboxes: Sandboxes;
  const tamper = {} as Record<Upstream, TamperingUpstream>;
  let gateway: GatewayProcess;
  let partner: TestPartner;
  let db: Client;
  let ada: any;
  let virtualCard: any;
  let physicalCard: any;
  let securityKey: string;
  let pinBlock: string;

  before(async function () {
    sandboxes = await startSandboxes();
    for (const name of ['issuer', 'processing', 'accounts'] as const) tamper[name] = await startTamperingUpstream(sandboxes[name].url);
    gateway = await startGatewayProcess({
      env: { ...HIGH_RATE_LIMITS, ISSUER_URL: tamper.issuer.url, PROCESSING_URL: tamper.processing.url, ACCOUNTS_URL: tamper.accounts.url },
      // Counts whole tables (no PAN in any row) while other files' gateways write meanwhile: a database of its own.
      ownDatabase: true,
    });
    partner = await registerPartner(gateway, 'hostile-upstream');
    db = new Client({ connectionString: gateway.databaseUrl });
    await db.connect();
    for (const pan of [PAN, PAN_GROUPED, '5355709999999995']) recordSecret('pan', pan);
    ({ ada, virtualCard, physicalCard, securityKey, pinBlock } = await cardFixture(gateway, partner, sandboxes.issuer.url));
  });

  afterEach(function () {
    for (const proxy of Object.values(tamper)) proxy.clear();
  });

  after(async function () {
    await db?.end();
    await gateway?.stop();
    for (const proxy of Object.values(tamper)) await proxy?.close();
    await sandboxes?.close();
  });

  /** What a refused answer must leave as it was: this partner's rows, and no stored PAN anywhere. */
  async function localState() {
    const result = await db.query(
      `SELECT (SELECT count(*) FROM cards WHERE partner_id = $1)::int AS cards,
              (SELECT count(*) FROM card_status_history WHERE partner_id = $1)::int AS history,
              (SELECT count(*) FROM audit_log WHERE partner_id = $1 AND outcome = 'success')::int AS audit_success,
              (SELECT count(*) FROM outbox_events WHERE partner_id = $1)::int AS outbox,
              (SELECT coalesce(json_agg(json_build_array(card_key, card_mask, status_code) ORDER BY card_key), '[]'::json) FROM cards WHERE partner_id = $1) AS cards_state`,
      [partner.id]
    );
    return result.rows[0];
  }

  /** No table holds the PAN: cards, audit details, outbox payloads, idempotency answers. */
  async function panStored(): Promise<number> {
    const digits = PAN;
    const result = await db.query(
      `SELECT (SELECT count(*) FROM cards WHERE regexp_replace(card_mask, '[ -]', '', 'g') LIKE '%' || $1 || '%')
            + (SELECT count(*) FROM audit_log WHERE regexp_replace(coalesce(details::text, ''), '[ -]', '', 'g') LIKE '%' || $1 || '%')
            + (SELECT count(*) FROM outbox_events WHERE regexp_replace(payload::text, '[ -]', '', 'g') LIKE '%' || $1 || '%')
            + (SELECT count(*) FROM idempotency_keys WHERE regexp_replace(coalesce(response_body::text, '') || coalesce(convert_from(response_bytes, 'UTF8'), ''), '[ -]', '', 'g') LIKE '%' || $1 || '%') AS n`,
      [digits]
    );
    return Number(result.rows[0].n);
  }

  function expectNoCardNumber(response: ApiResponse, what: string): void {
    const text = digitsOf(JSON.stringify(response.body));
    expect(text, `${what}: answer ${JSON.stringify(response.body)}`).to.not.include(PAN).and.not.include('5355709999999995');
  }

  function expectCardDataRefused(response: ApiResponse, upstream: Upstream, what: string): void {
    expect(response.status, `${what}: ${JSON.stringify(response.body)}`).to.equal(502);
    expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(response.body).to.include({ code: 'upstream_error', upstream });
    expectNoCardNumber(response, what);
  }

  describe('an upstream error code holding a card number is not echoed (upstreamCode dropped, detail without it)', function () {
    const routes: { route: string; kind: string; upstream: Upstream; call: () => { method: string; path: string }; request: () => { method: string; path: string; body?: unknown } }[] = [
      { route: 'get-card', kind: 'proxied read', upstream: 'issuer', call: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}` }), request: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}` }) },
      { route: 'get-card-status', kind: 'proxied read', upstream: 'issuer', call: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}/status` }), request: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}/status` }) },
      { route: 'get-card-limits', kind: 'proxied read', upstream: 'issuer', call: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}/limits` }), request: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}/limits` }) },
      { route: 'get-pin-encryption-key', kind: 'proxied read', upstream: 'issuer', call: () => ({ method: 'GET', path: '/pin-encryption-key' }), request: () => ({ method: 'GET', path: '/pin-encryption-key' }) },
      {
        route: 'get-card-pan (audited read)',
        kind: 'proxied read',
        upstream: 'issuer',
        call: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}/pan` }),
        request: () => ({ method: 'GET', path: `/cards/${virtualCard.cardKey}/pan?${new URLSearchParams({ expDate: virtualCard.expDate, securityKey })}` }),
      },
      { route: 'issue-virtual-card', kind: 'orchestrated write', upstream: 'issuer', call: () => ({ method: 'POST', path: '/cards' }), request: () => ({ method: 'POST', path: `/individual/accounts/${ada._id}/cards/virtual`, body: cardBody(ada.clientID) }) },
      { route: 'lock-card', kind: 'orchestrated write', upstream: 'issuer', call: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/status` }), request: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/lock`, body: { expDate: virtualCard.expDate } }) },
      {
        route: 'set-card-emboss-name',
        kind: 'orchestrated write',
        upstream: 'issuer',
        call: () => ({ method: 'PATCH', path: `/cards/${virtualCard.cardKey}/emboss-name` }),
        request: () => ({ method: 'PATCH', path: `/cards/${virtualCard.cardKey}/emboss-name`, body: { embossedName: 'HOSTILE.TEST' } }),
      },
      {
        route: 'replace-card',
        kind: 'orchestrated write',
        upstream: 'issuer',
        call: () => ({ method: 'POST', path: `/cards/${physicalCard.cardKey}/replace` }),
        request: () => ({ method: 'POST', path: `/cards/${physicalCard.cardKey}/replace`, body: { expDate: physicalCard.expDate } }),
      },
      {
        route: 'reissue-card',
        kind: 'orchestrated write',
        upstream: 'issuer',
        call: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/reissue` }),
        request: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/reissue`, body: { expDate: virtualCard.expDate } }),
      },
      {
        route: 'patch-card-limits',
        kind: 'orchestrated write',
        upstream: 'issuer',
        call: () => ({ method: 'PATCH', path: `/cards/${virtualCard.cardKey}/limits` }),
        request: () => ({ method: 'PATCH', path: `/cards/${virtualCard.cardKey}/limits`, body: [{ name: 'dailyPurchase', value: 123 }] }),
      },
      { route: 'authorize-cardholder', kind: 'orchestrated write', upstream: 'issuer', call: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/authorize` }), request: () => ({ method: 'POST', path: `/cards/${virtualCard.cardKey}/authorize`, body: { pin: pinBlock } }) },
      { route: 'list-individual-transactions', kind: 'orchestrated read', upstream: 'processing', call: () => ({ method: 'GET', path: '/transactions' }), request: () => ({ method: 'GET', path: `/individual/accounts/${ada._id}/transactions` }) },
      {
        route: 'check-card-issuing-fee',
        kind: 'proxied write',
        upstream: 'processing',
        call: () => ({ method: 'POST', path: '/fees' }),
        request: () => ({ method: 'POST', path: '/fees/card-issuing', body: { CustomerType: 'Consumer Debit', ProductType: 'R002', clientId: ada.clientID } }),
      },
      { route: 'list-delivery-methods', kind: 'proxied read', upstream: 'processing', call: () => ({ method: 'GET', path: '/delivery-methods' }), request: () => ({ method: 'GET', path: '/delivery-methods?country=DE' }) },
      { route: 'create-individual', kind: 'orchestrated write', upstream: 'accounts', call: () => ({ method: 'POST', path: '/accounts' }), request: () => ({ method: 'POST', path: '/individual/accounts', body: individualBody({ firstName: 'Hostile' }) }) },
    ];

    for (const routeCase of routes) {
      for (const [status, expected] of [
        [422, { status: 422, code: 'upstream_rejected' }],
        [503, { status: 502, code: 'upstream_error' }],
      ] as const) {
        it(`${routeCase.route} (${routeCase.kind}, ${routeCase.upstream}): the upstream answers ${status} with a PAN in errorCode and message → ${expected.status} ${expected.code}, no upstreamCode, nothing changed`, async function () {
          for (const errorCode of CODES) {
            const before = await localState();
            tamper[routeCase.upstream].tampers = [{ ...routeCase.call(), answer: { status, body: { errorCode, message: `card ${PAN_GROUPED} refused` } } }];
            const request = routeCase.request();
            const response = await api(gateway, partner, request.method, request.path, { body: request.body });
            expect(response.status, `${errorCode}: ${JSON.stringify(response.body)}`).to.equal(expected.status);
            expect(response.body).to.include({ code: expected.code, upstream: routeCase.upstream });
            expect(response.body, 'upstreamCode').to.not.have.property('upstreamCode');
            expect(response.body.detail).to.include(`HTTP ${status}`);
            expectNoCardNumber(response, errorCode);
            expect(tamper[routeCase.upstream].tampered.length, 'the tampered call was made').to.be.greaterThan(0);
            expect(await localState()).to.deep.equal(before);
          }
          expect(digitsOf(gateway.output())).to.not.include(PAN).and.not.include('5355709999999995');
        });
      }
    }

    it('a contract-shaped code without card data is still echoed (EXP_DATE_MISMATCH)', async function () {
      tamper.issuer.tampers = [{ method: 'GET', path: `/cards/${virtualCard.cardKey}/limits`, answer: { status: 422, body: { errorCode: 'EXP_DATE_MISMATCH' } } }];
      const response = await api(gateway, partner, 'GET', `/cards/${virtualCard.cardKey}/limits`);
      expect(response.status).to.equal(422);
      expect(response.body).to.include({ upstreamCode: 'EXP_DATE_MISMATCH' });
    });
  });

  describe('a cardMask that is not masked', function () {
    for (const mask of [PAN, PAN_GROUPED, '535570999999****']) {
      for (const type of ['virtual', 'physical'] as const) {
        it(`issuance of a ${type} card answered with cardMask "${mask.replace(/[0-9]/g, '9')}" → 502, no card, history, audit or PAN stored`, async function () {
          const before = await localState();
          const cardsBefore = (await db.query('SELECT count(*)::int AS n FROM cards')).rows[0].n;
          tamper.issuer.tampers = [{ method: 'POST', path: '/cards', rewrite: (card) => ({ ...card, cardMask: mask }) }];
          const response = await api(gateway, partner, 'POST', `/individual/accounts/${ada._id}/cards/${type}`, { body: cardBody(ada.clientID) });
          expectCardDataRefused(response, 'issuer', `issue ${type}`);
          expect(tamper.issuer.tampered).to.have.length(1);
          expect((await db.query('SELECT count(*)::int AS n FROM cards')).rows[0].n, 'rows in cards').to.equal(cardsBefore);
          expect(await localState()).to.deep.equal(before);
          expect(await panStored()).to.equal(0);
        });
      }
    }

    it('GET /cards/{id} answered with a full PAN as cardMask → 502; the stored mask stays masked; GET /cards and the individual card list never show a PAN', async function () {
      tamper.issuer.tampers = [{ method: 'GET', path: `/cards/${virtualCard.cardKey}`, rewrite: (card) => ({ ...card, cardMask: PAN }) }];
      const response = await api(gateway, partner, 'GET', `/cards/${virtualCard.cardKey}`);
      expectCardDataRefused(response, 'issuer', 'get card');
      for (const path of ['/cards', `/individual/accounts/${ada._id}/cards`]) {
        const list = await api(gateway, partner, 'GET', path);
        expect(list.status).to.equal(200);
        expectNoCardNumber(list, path);
      }
      const stored = (await db.query('SELECT card_mask FROM cards WHERE card_key = $1', [virtualCard.cardKey])).rows[0];
      expect(stored.card_mask).to.equal(virtualCard.cardMask);
      tamper.issuer.clear();
      const untouched = await api(gateway, partner, 'GET', `/cards/${virtualCard.cardKey}`);
      expect(untouched.status, 'an honest answer still passes').to.equal(200);
      expect(untouched.body.cardMask).to.match(/^5355 70\*\* \*\*\*\* [0-9]{4}$/);
    });

    for (const operation of ['replace', 'reissue'] as const) {
      it(`${operation}: the new card read answers a full PAN as cardMask → 502, no PAN stored${operation === 'replace' ? ' (the record moved to the new key, old mask kept)' : ', nothing stored'}`, async function () {
        const card = (await api(gateway, partner, 'POST', `/individual/accounts/${ada._id}/cards/physical`, { body: cardBody(ada.clientID) })).body;
        const before = await localState();
        tamper.issuer.tampers = [{ method: 'GET', path: '/cards/*', rewrite: (answer) => ({ ...answer, cardMask: PAN_GROUPED }) }];
        const response = await api(gateway, partner, 'POST', `/cards/${card.cardKey}/${operation}`, { body: { expDate: card.expDate } });
        expectCardDataRefused(response, 'issuer', operation);
        const after = await localState();
        if (operation === 'replace') {
          // The replace stores the new key before reading the new card (docs/reliability.md): only
          // the key of the replaced card changed; its mask is still the old, masked one.
          const withoutKeys = (state: any) => state.cards_state.map(([, mask, code]: string[]) => `${mask}|${code}`).sort();
          expect({ ...after, cards_state: withoutKeys(after) }).to.deep.equal({ ...before, cards_state: withoutKeys(before) });
          expect(after.cards_state.map(([key]: string[]) => key)).to.not.include(card.cardKey);
        } else {
          expect(after).to.deep.equal(before);
        }
        expect(await panStored()).to.equal(0);
      });
    }
  });

  describe('a card number in any other field', function () {
    it('proxied: a limit whose currency is a PAN → 502', async function () {
      tamper.issuer.tampers = [{ method: 'GET', path: `/cards/${virtualCard.cardKey}/limits`, rewrite: (limits: any[]) => limits.map((l, i) => (i === 2 ? { ...l, currency: PAN } : l)) }];
      expectCardDataRefused(await api(gateway, partner, 'GET', `/cards/${virtualCard.cardKey}/limits`), 'issuer', 'limits');
    });

    it('proxied: a fee answer whose ProductType holds a grouped PAN → 502', async function () {
      tamper.processing.tampers = [{ method: 'POST', path: '/fees', rewrite: (fee) => ({ ...fee, ProductType: `R002 ${PAN_GROUPED}` }) }];
      const response = await api(gateway, partner, 'POST', '/fees/card-issuing', { body: { CustomerType: 'Consumer Debit', ProductType: 'R002', clientId: ada.clientID } });
      expectCardDataRefused(response, 'processing', 'fee');
    });

    it('proxied: a fee answered as a 16-digit Luhn-valid number → 502', async function () {
      tamper.processing.tampers = [{ method: 'POST', path: '/fees', rewrite: (fee) => ({ ...fee, fee: Number(PAN) }) }];
      const response = await api(gateway, partner, 'POST', '/fees/card-issuing', { body: { CustomerType: 'Consumer Debit', ProductType: 'R002', clientId: ada.clientID } });
      expectCardDataRefused(response, 'processing', 'fee number');
    });

    it('orchestrated: a transaction whose merchant name holds a PAN → 502', async function () {
      tamper.processing.tampers = [
        {
          method: 'GET',
          path: '/transactions',
          rewrite: (page) => ({
            ...page,
            total: 1,
            data: [{ id: 'tx1', cardId: virtualCard.cardKey, accountId: ada.clientID, amount: 12.5, currency: 'EUR', type: 'purchase', status: 'settled', createdAt: new Date().toISOString(), merchant: { name: `Shop ${PAN_GROUPED}`, mcc: '5411', city: 'Berlin', country: 'DE' } }],
          }),
        },
      ];
      expectCardDataRefused(await api(gateway, partner, 'GET', `/individual/accounts/${ada._id}/transactions`), 'processing', 'transactions');
    });

    it('orchestrated: a limits patch answer whose limit name is a PAN → 502 (and the SANDBOX-LEAK card still works: its leaked fields are dropped, not refused)', async function () {
      tamper.issuer.tampers = [{ method: 'PATCH', path: `/cards/${virtualCard.cardKey}/limits`, rewrite: (limits: any[]) => limits.map((l, i) => (i === 0 ? { ...l, name: PAN } : l)) }];
      expectCardDataRefused(await api(gateway, partner, 'PATCH', `/cards/${virtualCard.cardKey}/limits`, { body: [{ name: 'dailyPurchase', value: 321 }] }), 'issuer', 'limits patch');
      tamper.issuer.clear();
      const leak = await api(gateway, partner, 'POST', `/individual/accounts/${ada._id}/cards/virtual`, { body: cardBody(ada.clientID, { embossedName: 'SANDBOX-LEAK' }) });
      expect(leak.status, JSON.stringify(leak.body)).to.equal(201);
      expect(leak.body).to.not.have.any.keys('cardNumber', 'cvv');
      const read = await api(gateway, partner, 'GET', `/cards/${leak.body.cardKey}`);
      expect(read.status).to.equal(200);
      expect(read.body).to.not.have.any.keys('cardNumber', 'cvv');
    });
  });

  describe('CVV and PAN reveals must be ciphertext', function () {
    const reveal = (what: 'cvv' | 'pan', key = securityKey) => `/cards/${virtualCard.cardKey}/${what}?${new URLSearchParams({ expDate: virtualCard.expDate, securityKey: key })}`;
    const cases: { what: 'cvv' | 'pan'; name: string; body: () => Record<string, string> }[] = [
      { what: 'cvv', name: 'a plaintext CVV', body: () => ({ cvv: '123' }) },
      { what: 'pan', name: 'a plaintext PAN', body: () => ({ cardNumber: PAN }) },
      { what: 'pan', name: 'a grouped plaintext PAN', body: () => ({ cardNumber: PAN_GROUPED }) },
      { what: 'cvv', name: 'base64 of 16 bytes', body: () => ({ cvv: crypto.randomBytes(16).toString('base64') }) },
      { what: 'pan', name: 'base64 of 384 bytes under a 2048-bit key', body: () => ({ cardNumber: crypto.randomBytes(384).toString('base64') }) },
    ];
    for (const c of cases) {
      it(`GET /cards/{id}/${c.what} answered with ${c.name} → 502, audited as a failure`, async function () {
        tamper.issuer.tampers = [{ method: 'GET', path: `/cards/${virtualCard.cardKey}/${c.what}`, answer: { status: 200, body: c.body() } }];
        const response = await api(gateway, partner, 'GET', reveal(c.what));
        expectCardDataRefused(response, 'issuer', c.name);
        expect(JSON.stringify(response.body)).to.not.match(/"(cvv|cardNumber)"/);
        const audit = (await db.query("SELECT outcome FROM audit_log WHERE target_id = $1 AND operation = $2 ORDER BY id DESC LIMIT 1", [virtualCard.cardKey, `card.${c.what}.read`])).rows[0];
        expect(audit).to.deep.equal({ outcome: 'failure' });
      });
    }

    it('the real issuer answers (2048- and 3072-bit keys) still pass: ciphertext of the key size', async function () {
      const { publicKey, privateKey } = rsaKeyPair(3072);
      const bigKey = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
      for (const key of [securityKey, bigKey]) {
        for (const what of ['cvv', 'pan'] as const) {
          const response = await api(gateway, partner, 'GET', reveal(what, key));
          expect(response.status, JSON.stringify(response.body)).to.equal(200);
          const value = what === 'cvv' ? response.body.cvv : response.body.cardNumber;
          expect(Buffer.from(value, 'base64').length).to.equal(key === bigKey ? 384 : 256);
        }
      }
      const pan = crypto.privateDecrypt({ key: privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from((await api(gateway, partner, 'GET', reveal('pan', bigKey))).body.cardNumber, 'base64')).toString();
      recordSecret('pan', pan);
      expect(pan).to.match(/^535570[0-9]{10}$/);
    });
  });
});
