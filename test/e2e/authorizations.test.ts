import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { verifySignature } from '../../gateway/outbound/signature';
import { api, cardBody, individualBody } from '../support/api';
import { startGatewayProcess, waitForLogLine, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { recordSecret } from '../support/secrets';
import { Database } from '../../gateway/db/database';
import { createLogger } from '../../gateway/logging/logger';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { metricSample } from '../support/metrics';
import { waitFor } from '../support/wait';

const PROCESSING_SECRET = crypto.randomBytes(32).toString('base64url');
const ISSUER_SECRET = crypto.randomBytes(32).toString('base64url');

function sign(raw: string, t = Math.floor(Date.now() / 1000), secret = PROCESSING_SECRET): string {
  return `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
}

/**
 * Real-time authorization decisions (docs/authorizations.md): the processor's signed authorization
 * request on the notification listener, answered and recorded once per authorization id, on one
 * instance and across two on one database; and the processing sandbox asking the gateway for the
 * partner's simulated authorizations.
 */
describe('e2e: authorization decisions', function () {
  this.timeout(90_000);
  let gateway: GatewayProcess;
  /** A second instance on the same database, reached through a link a test can cut. */
  let second: GatewayProcess;
  let link: TcpProxy;
  let partner: TestPartner;

  const env = { PROCESSING_NOTIFY_SECRET: PROCESSING_SECRET, ISSUER_NOTIFY_SECRET: ISSUER_SECRET };
  /**
   * The decision trace (AUTHORIZATION_TRACE_FILE, a diagnostic): on in the first instance; in the
   * second it names a directory, which cannot be opened for appending (as a full disk or a denied
   * path): that instance must go on deciding.
   */
  const traceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'authorization-trace-'));
  const traceFile = path.join(traceDir, 'gateway.jsonl');
  let secondReadyAt = 0;
  const newCard = async () => {
    const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
    const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return { individualId: individual.body._id as string, cardKey: card.body.cardKey as string, expDate: card.body.expDate as string };
  };
  const request = (cardId: string, overrides: Record<string, unknown> = {}) => {
    const id = `auth_${crypto.randomBytes(12).toString('hex')}`;
    const at = new Date().toISOString();
    return {
      id,
      type: 'authorization.request',
      occurredAt: at,
      authorization: {
        id,
        transactionId: crypto.randomBytes(12).toString('hex'),
        cardId,
        amount: 25,
        currency: 'EUR',
        type: 'PURCHASE',
        merchant: { name: 'Corner Shop', mcc: '5411', city: 'Berlin', country: 'DE' },
        at,
        ...overrides,
      },
    };
  };
  const ask = async (body: Record<string, unknown>, options: { to?: GatewayProcess; signature?: string; requestId?: string } = {}) => {
    const raw = JSON.stringify(body);
    const response = await fetch(`${(options.to ?? gateway).notifyUrl}/upstream-notifications/processing/authorizations`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'upstream-notification-id': String(body.id),
        'upstream-signature': options.signature ?? sign(raw),
        ...(options.requestId ? { 'x-request-id': options.requestId } : {}),
      },
      body: raw,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
  const transactionsOf = async (cardKey: string) => (await api(gateway, partner, 'GET', `/transactions?cardKey=${cardKey}`)).body.data as any[];
  /** The processor's stand-in for `body` (DECLINED `stand_in`), notified as its `transaction.created`; answers the notification's status. */
  const notifyStandIn = async (body: ReturnType<typeof request>, to: GatewayProcess = gateway) => {
    const a = body.authorization;
    const standIn = {
      id: a.transactionId,
      cardId: a.cardId,
      accountId: null,
      amount: a.amount,
      currency: a.currency,
      type: a.type,
      status: 'DECLINED',
      merchant: a.merchant,
      createdAt: a.at,
      updatedAt: a.at,
      version: 1,
      settledAmount: null,
      declineReason: 'stand_in',
      relatedTransactionId: null,
      authorizationId: a.id,
      history: [{ kind: 'decline', amount: a.amount, at: a.at }],
    };
    const raw = JSON.stringify({ id: `ntf_${crypto.randomBytes(8).toString('hex')}`, type: 'transaction.created', occurredAt: a.at, transaction: standIn });
    const notified = await fetch(`${to.notifyUrl}/upstream-notifications/processing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'upstream-notification-id': JSON.parse(raw).id, 'upstream-signature': sign(raw) },
      body: raw,
    });
    await notified.text();
    return notified.status;
  };

  /**
   * A link between the second instance and PostgreSQL that stalls as a network holding packets
   * does, from the moment the decision's recording statement is on it (its prepared statement's
   * name, or its text where statements are not prepared), until `releaseAfterMs` later, or until the
   * instance has answered. `statement`: the recording's prepared statement, when it was one.
   */
  const RECORDING_MARKERS = ['authorization-record', 'authorization_recorded_by'];
  const askThroughStalledLink = async (body: ReturnType<typeof request>, releaseAfterMs: number | 'after the answer') => {
    const stalled = link.stallOn(RECORDING_MARKERS);
    try {
      const started = Date.now();
      const answering = ask(body, { to: second });
      const held = await Promise.race([stalled, answering.then(() => undefined)]);
      expect(held, 'the recording statement was on the link before any answer').to.be.instanceOf(Buffer);
      if (releaseAfterMs !== 'after the answer') setTimeout(() => link.release(), releaseAfterMs);
      const answer = await answering;
      return { answer, tookMs: Date.now() - started, statement: /authorization-record[a-z-]*/.exec(held!.toString('latin1'))?.[0] };
    } finally {
      link.release();
    }
  };
  /** What the database holds of an authorization id: its decision rows' states, the audit entries of its decision, the velocity ledger's entries of its transaction. */
  const recordedFor = async (body: ReturnType<typeof request>) => {
    const db = new Database(gateway.databaseUrl!, { max: 1, log: createLogger({ level: 'silent' }) });
    try {
      const count = async (sql: string, value: string) => Number((await db.query<{ n: string }>(sql, [value])).rows[0].n);
      return {
        decisions: (await db.query<{ state: string }>('SELECT state FROM authorization_decisions WHERE authorization_id = $1', [body.id])).rows.map((r) => r.state),
        audited: await count("SELECT count(*) AS n FROM audit_log WHERE request_id = 'authorization-' || $1", body.id),
        ledger: await count('SELECT count(*) AS n FROM card_velocity_ledger WHERE transaction_id = $1', body.authorization.transactionId),
      };
    } finally {
      await db.close();
    }
  };
  const createdEvents = async (owner: TestPartner, transactionId: string) =>
    ((await api(gateway, owner, 'GET', '/events?type=transaction.created&limit=100')).body.data as any[]).filter((e) => e.data.transaction._id === transactionId);
  /**
   * An id answered 503 while its recording was held on the link: once the link is back (the held
   * statement refused by the database) and the processor's stand-in notified, no decision, no
   * transaction from the gateway (the stand-in's only), no `transaction.created` from the gateway,
   * no audit entry of a decision and nothing in the velocity ledger.
   */
  const expectNothingStood = async (owner: TestPartner, body: ReturnType<typeof request>, answered: { answer: { status: number; body: any }; tookMs: number }) => {
    expect(answered.answer.status, JSON.stringify(answered.answer.body)).to.equal(503);
    expect(answered.answer.body.code).to.equal('decision_unavailable');
    expect(answered.tookMs, 'before AUTHORIZATION_DEADLINE_MS (2000)').to.be.below(2000);
    // The held recording ran once the link was back: refused by the database, or (were the fence
    // broken) recorded after the 503, which the instance logs at error.
    const late = await waitForLogLine(second, (l) => l.authorizationId === body.id && typeof l.msg === 'string' && /refused by the database after its 503|reached the gateway after its 503/.test(l.msg), 10_000);
    expect(await notifyStandIn(body, second), 'the processor\'s stand-in').to.equal(200);
    const recorded = await recordedFor(body);
    expect(recorded.decisions.filter((state) => state === 'decided'), 'no decision').to.deep.equal([]);
    expect(recorded.audited, 'no decision audited').to.equal(0);
    expect(recorded.ledger, 'no velocity count').to.equal(0);
    const t = (await api(gateway, owner, 'GET', `/transactions/${body.authorization.transactionId}`)).body;
    expect(t).to.deep.include({ status: 'DECLINED', declineReason: 'stand_in', authorization: null });
    const events = await createdEvents(owner, body.authorization.transactionId);
    expect(events, 'the stand-in\'s event only').to.have.length(1);
    expect(events[0].data.transaction).to.deep.include({ status: 'DECLINED', authorization: null });
    expect(late).to.include({ level: 'info' });
  };
  /** An id answered with a decision although its recording was held a while: exactly one decision, transaction, event and velocity count. */
  const expectRecordedOnce = async (owner: TestPartner, body: ReturnType<typeof request>, answered: { answer: { status: number; body: any } }, decidedBy: string) => {
    expect(answered.answer).to.deep.equal({ status: 200, body: { approved: true } });
    expect(await recordedFor(body)).to.deep.equal({ decisions: ['decided'], audited: 1, ledger: 1 });
    const t = (await api(gateway, owner, 'GET', `/transactions/${body.authorization.transactionId}`)).body;
    expect(t).to.deep.include({ status: 'PENDING' });
    expect(t.authorization.decidedBy).to.equal(decidedBy);
    const events = await createdEvents(owner, body.authorization.transactionId);
    expect(events).to.have.length(1);
    expect(events[0].data.transaction.authorization.decidedBy).to.equal(decidedBy);
  };

  before(async () => {
    recordSecret('notifySecret', PROCESSING_SECRET);
    recordSecret('notifySecret', ISSUER_SECRET);
    gateway = await startGatewayProcess({ env: { ...env, AUTHORIZATION_TRACE_FILE: traceFile }, ownDatabase: true });
    const direct = new URL(gateway.databaseUrl!);
    link = await startTcpProxy({ host: decodeURIComponent(direct.hostname), port: Number(direct.port || 5432) });
    const viaLink = new URL(direct.toString());
    viaLink.hostname = '127.0.0.1';
    viaLink.port = String(link.port);
    second = await startGatewayProcess({ env: { ...env, AUTHORIZATION_TRACE_FILE: traceDir }, databaseUrl: viaLink.toString() });
    secondReadyAt = Date.now();
    partner = await registerPartner(gateway);
  });
  after(async () => {
    await second?.stop();
    await link?.close();
    await gateway?.stop();
    fs.rmSync(traceDir, { recursive: true, force: true });
  });

  it('approves a purchase on an active card: the transaction is PENDING with authorization.decidedBy approved, and its event is written', async () => {
    const { cardKey, individualId } = await newCard();
    const body = request(cardKey);
    const answer = await ask(body);
    expect(answer).to.deep.equal({ status: 200, body: { approved: true } });
    const [t] = await transactionsOf(cardKey);
    expect(t).to.deep.include({ _id: body.authorization.transactionId, individualId, status: 'PENDING', amount: 25, authorization: { decidedBy: 'approved' } });
    const events = (await api(gateway, partner, 'GET', '/events?type=transaction.created')).body.data.filter((e: any) => e.data.transaction._id === t._id);
    expect(events).to.have.length(1);
    expect(events[0].data.transaction.authorization).to.deep.equal({ decidedBy: 'approved' });
    // The decision is on its request's access-log line.
    const line = await waitForLogLine(gateway, (l) => l.msg === 'request' && l.authorizationId === body.id);
    expect(line).to.include({ component: 'notifications', status: 200, approved: true, decidedBy: 'approved' });
  });

  it('declines on the card\'s own state: card_locked for a locked card, card_inactive for a closed one and for a card it does not hold', async () => {
    const locked = await newCard();
    expect((await api(gateway, partner, 'POST', `/cards/${locked.cardKey}/lock`, { body: { expDate: locked.expDate } })).status).to.equal(200);
    expect((await ask(request(locked.cardKey))).body).to.deep.equal({ approved: false, declineReason: 'card_locked' });
    const [t] = await transactionsOf(locked.cardKey);
    expect(t).to.deep.include({ status: 'DECLINED', declineReason: 'card_locked', authorization: { decidedBy: 'card_state', rule: 'card.status.LOCKED' } });
    expect(t.history.map((s: any) => s.kind)).to.deep.equal(['decline']);

    const closed = await newCard();
    expect((await api(gateway, partner, 'POST', `/cards/${closed.cardKey}/restrict/closed`, { body: { expDate: closed.expDate } })).status).to.equal(200);
    expect((await ask(request(closed.cardKey))).body).to.deep.equal({ approved: false, declineReason: 'card_inactive' });
    expect((await ask(request('CKNOTACARDOFOURS00'))).body).to.deep.equal({ approved: false, declineReason: 'card_inactive' });
  });

  it('a transaction the processor recorded first (its stand-in) stands: the decision answers it, with no second transaction, event or audit entry', async () => {
    const { cardKey, individualId } = await newCard();
    const body = request(cardKey);
    const a = body.authorization;
    expect(await notifyStandIn(body)).to.equal(200);
    expect(await ask(body)).to.deep.equal({ status: 200, body: { approved: false, declineReason: 'stand_in' } });
    const transactions = await transactionsOf(cardKey);
    expect(transactions).to.have.length(1);
    expect(transactions[0]).to.deep.include({ _id: a.transactionId, status: 'DECLINED', declineReason: 'stand_in' });
    expect(transactions[0].authorization, 'the processor recorded it: the gateway did not decide it').to.equal(null);
    const events = (await api(gateway, partner, 'GET', '/events?type=transaction.created')).body.data.filter((e: any) => e.data.transaction._id === a.transactionId);
    expect(events, 'the notification\'s event only').to.have.length(1);
    // The repeat gets the same answer from the decision row.
    expect(await ask(body)).to.deep.equal({ status: 200, body: { approved: false, declineReason: 'stand_in' } });
    // A decision of its own on the card is audited; the one that found the stand-in was not.
    expect((await ask(request(cardKey))).body).to.deep.equal({ approved: true });
    const audit = (await api(gateway, partner, 'GET', `/individual/accounts/${individualId}/audit-logs?limit=100`)).body.data as any[];
    const decided = audit.filter((e) => e.operation === 'card.authorization.decided').map((e) => e.details.transactionId);
    expect(decided).to.have.length(1);
    expect(decided).to.not.include(a.transactionId);
  });

  it('a repeat of one authorization id, sequential and concurrent, on one instance and on two, gets one decision and records one transaction', async () => {
    const { cardKey } = await newCard();
    const body = request(cardKey);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => ask(body, { to: i % 2 === 0 ? gateway : second })));
    for (const a of answers) expect(a).to.deep.equal({ status: 200, body: { approved: true } });
    expect(await ask(body, { to: second })).to.deep.equal({ status: 200, body: { approved: true } });
    const list = await transactionsOf(cardKey);
    expect(list.map((t) => t._id)).to.deep.equal([body.authorization.transactionId]);
    const created = (await api(gateway, partner, 'GET', '/events?type=transaction.created&limit=100')).body.data.filter((e: any) => e.data.transaction.cardKey === cardKey);
    expect(created, 'one event').to.have.length(1);

    // A repeat after the card was locked still gets the first decision: it is the same authorization.
    const card = (await api(gateway, partner, 'GET', `/cards/${cardKey}`)).body;
    expect((await api(gateway, partner, 'POST', `/cards/${cardKey}/lock`, { body: { expDate: card.expDate } })).status).to.equal(200);
    expect((await ask(body)).body).to.deep.equal({ approved: true });
  });

  it('declines on the spend controls, the partner\'s and the card\'s, each with its reason and rule', async () => {
    const { cardKey } = await newCard();
    const put = async (path: string, body: Record<string, unknown>) => {
      const r = await api(gateway, partner, 'PUT', path, { body });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
    };
    await put(`/cards/${cardKey}/spend-controls`, { blockedMccs: ['7995'], maxAmountPerTransaction: 100 });
    await put('/spend-controls', { allowedCountries: ['DE', 'FR'] });
    try {
      const cases: [Record<string, unknown>, Record<string, unknown>][] = [
        [{ merchant: { name: 'Casino', mcc: '7995', city: 'Berlin', country: 'DE' } }, { declineReason: 'mcc_blocked', rule: 'card.blockedMccs' }],
        [{ merchant: { name: 'Shop', mcc: '5411', city: 'Rome', country: 'IT' } }, { declineReason: 'country_blocked', rule: 'partner.allowedCountries' }],
        [{ amount: 100.01 }, { declineReason: 'amount_exceeded', rule: 'card.maxAmountPerTransaction' }],
      ];
      for (const [overrides, expected] of cases) {
        const body = request(cardKey, overrides);
        expect((await ask(body)).body, JSON.stringify(overrides)).to.deep.equal({ approved: false, declineReason: expected.declineReason });
        const t = (await api(gateway, partner, 'GET', `/transactions/${body.authorization.transactionId}`)).body;
        expect(t).to.deep.include({ status: 'DECLINED', declineReason: expected.declineReason, authorization: { decidedBy: 'spend_controls', rule: expected.rule } });
      }
      expect((await ask(request(cardKey, { amount: 100 }))).body, 'within every control').to.deep.equal({ approved: true });
    } finally {
      await put('/spend-controls', {});
    }
  });

  it('velocity holds under concurrency on two instances: exactly maxCount of concurrent authorizations are approved', async () => {
    const { cardKey } = await newCard();
    expect((await api(gateway, partner, 'PUT', `/cards/${cardKey}/spend-controls`, { body: { velocity: [{ window: '1h', maxCount: 2 }] } })).status).to.equal(200);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => ask(request(cardKey, { amount: 5 }), { to: i % 2 === 0 ? gateway : second })));
    const approved = answers.filter((a) => a.body.approved === true);
    expect(approved, JSON.stringify(answers)).to.have.length(2);
    for (const a of answers.filter((x) => x.body.approved === false)) expect(a.body.declineReason).to.equal('velocity_exceeded');
    const list = await transactionsOf(cardKey);
    expect(list.filter((t) => t.status === 'PENDING')).to.have.length(2);
    expect(list.filter((t) => t.status === 'DECLINED' && t.authorization.rule === 'card.velocity[0].maxCount')).to.have.length(4);
  });

  describe('a link to PostgreSQL that stalls with the recording on it, then comes back', function () {
    it('a first decision (the reads, then the recording): answered 503, the late recording refused; a short stall still decides once', async () => {
      const { cardKey } = await newCard();
      const body = request(cardKey);
      const stalled = await askThroughStalledLink(body, 'after the answer');
      if (stalled.statement) expect(stalled.statement).to.equal('authorization-record-with-claim');
      await expectNothingStood(partner, body, stalled);

      const fresh = await newCard();
      const decided = request(fresh.cardKey);
      const held = await askThroughStalledLink(decided, 200);
      if (held.statement) expect(held.statement).to.equal('authorization-record-with-claim');
      await expectRecordedOnce(partner, decided, held, 'approved');
    });

    it('a card decided before (the recording alone, one statement): answered 503, the late recording refused; a short stall still decides once', async () => {
      const { cardKey } = await newCard();
      // The second instance decides once for the card, and remembers it.
      expect((await ask(request(cardKey), { to: second })).body).to.deep.equal({ approved: true });
      const body = request(cardKey);
      const stalled = await askThroughStalledLink(body, 'after the answer');
      if (stalled.statement) expect(stalled.statement).to.equal('authorization-record-remembered');
      await expectNothingStood(partner, body, stalled);

      const decided = request(cardKey);
      const held = await askThroughStalledLink(decided, 200);
      if (held.statement) expect(held.statement).to.equal('authorization-record-remembered');
      await expectRecordedOnce(partner, decided, held, 'approved');
    });
  });

  describe('the partner\'s decision endpoint', function () {
    /** A real decision endpoint: answers as `behaviour` says and keeps what it received. */
    type Behaviour = { kind: 'answer'; body: unknown } | { kind: 'hang' } | { kind: 'status'; status: number } | { kind: 'garbage' } | { kind: 'hold'; until: Promise<void>; body: unknown };
    class DecisionEndpoint {
      readonly received: { raw: string; body: any; signature: string }[] = [];
      behaviour: Behaviour = { kind: 'answer', body: { approved: true } };
      private readonly server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          this.received.push({ raw, body: JSON.parse(raw), signature: String(req.headers['partner-gateway-signature'] ?? '') });
          const b = this.behaviour;
          if (b.kind === 'hang') return;
          if (b.kind === 'status') return void res.writeHead(b.status).end();
          if (b.kind === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"approved": "maybe"');
          if (b.kind === 'hold') return void b.until.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(b.body)));
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(b.body));
        });
      });
      async up(): Promise<string> {
        await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
        return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/decide`;
      }
      async close(): Promise<void> {
        this.server.closeAllConnections();
        await new Promise((resolve) => this.server.close(resolve));
      }
    }
    let enrolled: TestPartner;
    let bystander: TestPartner;
    let endpoint: DecisionEndpoint;
    let bystanderEndpoint: DecisionEndpoint;
    let secret: string;
    let cardKey: string;

    before(async () => {
      enrolled = await registerPartner(gateway);
      bystander = await registerPartner(gateway);
      endpoint = new DecisionEndpoint();
      bystanderEndpoint = new DecisionEndpoint();
      const created = await api(gateway, enrolled, 'POST', '/authorization-endpoint', { body: { url: await endpoint.up(), timeoutMs: 400, defaultDecision: 'decline' } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      secret = created.body.secret;
      recordSecret('webhookSecret', secret);
      const other = await api(gateway, bystander, 'POST', '/authorization-endpoint', { body: { url: await bystanderEndpoint.up() } });
      expect(other.status, JSON.stringify(other.body)).to.equal(201);
      recordSecret('webhookSecret', other.body.secret);
      const individual = await api(gateway, enrolled, 'POST', '/individual/accounts', { body: individualBody() });
      const card = await api(gateway, enrolled, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
      cardKey = card.body.cardKey;
    });
    after(async () => {
      await endpoint?.close();
      await bystanderEndpoint?.close();
    });
    beforeEach(() => {
      endpoint.behaviour = { kind: 'answer', body: { approved: true } };
    });
    const decided = async (body: ReturnType<typeof request>) => (await api(gateway, enrolled, 'GET', `/transactions/${body.authorization.transactionId}`)).body;

    it('asks the endpoint with a signed authorization.request (no card number, CVV or PIN) and applies its approval', async () => {
      const body = request(cardKey, { amount: 31.5 });
      expect((await ask(body)).body).to.deep.equal({ approved: true });
      const [received] = endpoint.received.filter((r) => r.body.data.authorization.id === body.id);
      expect(verifySignature(received.signature, received.raw, [secret], 300), 'Partner-Gateway-Signature verifies under the endpoint secret').to.equal(true);
      expect(received.body).to.deep.include({ type: 'authorization.request', partnerId: enrolled.id });
      expect(received.body.data.authorization).to.deep.include({ id: body.id, amount: 31.5, currency: 'EUR', type: 'PURCHASE' });
      expect(received.body.data.card.cardKey).to.equal(cardKey);
      expect(received.raw).to.not.match(/cardNumber|"cvv"|"pin"/i);
      const t = await decided(body);
      expect(t.authorization.decidedBy).to.equal('partner');
      expect(t.authorization.partnerLatencyMs).to.be.a('number');
      expect(bystanderEndpoint.received, 'another partner never receives these requests').to.deep.equal([]);
    });

    it('a decline is partner_declined (the partner\'s reason kept in the audit entry only); a repeat of the id asks the partner once', async () => {
      endpoint.behaviour = { kind: 'answer', body: { approved: false, declineReason: 'balance too low' } };
      const body = request(cardKey);
      expect((await ask(body)).body).to.deep.equal({ approved: false, declineReason: 'partner_declined' });
      expect((await ask(body, { to: second })).body).to.deep.equal({ approved: false, declineReason: 'partner_declined' });
      expect(endpoint.received.filter((r) => r.body.data.authorization.id === body.id)).to.have.length(1);
      // Concurrent repeats on two instances: one call of the partner too.
      const concurrent = request(cardKey);
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => ask(concurrent, { to: i % 2 === 0 ? gateway : second })));
      for (const a of answers) expect(a.body).to.deep.equal({ approved: false, declineReason: 'partner_declined' });
      expect(endpoint.received.filter((r) => r.body.data.authorization.id === concurrent.id)).to.have.length(1);
      expect((await decided(body)).authorization).to.include({ decidedBy: 'partner' });
    });

    for (const [name, behaviour, reason] of [
      ['hangs', { kind: 'hang' }, 'partner_timeout'],
      ['answers 500', { kind: 'status', status: 500 }, 'partner_error'],
      ['sends garbage', { kind: 'garbage' }, 'partner_error'],
    ] as const) {
      it(`an endpoint that ${name} gives its default decision (decline: ${reason}), and the processor has the answer before the deadline`, async () => {
        endpoint.behaviour = behaviour as Behaviour;
        const body = request(cardKey);
        const started = Date.now();
        const answer = await ask(body);
        const tookMs = Date.now() - started;
        expect(answer).to.deep.equal({ status: 200, body: { approved: false, declineReason: reason } });
        expect(tookMs, 'within AUTHORIZATION_DEADLINE_MS (2000)').to.be.below(2000);
        expect((await decided(body)).authorization).to.include({ decidedBy: 'partner_default' });
      });
    }

    it('with the endpoint (the claim, the partner\'s answer, then the recording), a stalled link: answered 503, the late recording refused; a short stall still decides once', async () => {
      const body = request(cardKey);
      const stalled = await askThroughStalledLink(body, 'after the answer');
      if (stalled.statement) expect(stalled.statement).to.equal('authorization-record');
      expect(endpoint.received.filter((r) => r.body.data.authorization.id === body.id), 'the partner was asked').to.have.length(1);
      await expectNothingStood(enrolled, body, stalled);

      const decided = request(cardKey);
      const held = await askThroughStalledLink(decided, 200);
      if (held.statement) expect(held.statement).to.equal('authorization-record');
      await expectRecordedOnce(enrolled, decided, held, 'partner');
    });

    it('a claim lost before its decision (PostgreSQL crashing after the claim\'s commit, which does not wait for its flush) is a crash before the claim: the holder records nothing, a repeat decides once', async () => {
      let release!: () => void;
      endpoint.behaviour = { kind: 'hold', until: new Promise<void>((resolve) => (release = resolve)), body: { approved: true } };
      const body = request(cardKey);
      const sent = () => endpoint.received.filter((r) => r.body.data.authorization.id === body.id);
      // The checks below run while the partner is held, before its timeout decides: the connection
      // is opened first, and the endpoint given 1500 ms rather than 400 (a loaded machine's margin).
      const db = new Database(gateway.databaseUrl!, { max: 1, log: createLogger({ level: 'silent' }) });
      await db.query('SELECT 1');
      const recorded = async () => (await db.query('SELECT status FROM card_transactions WHERE id = $1', [body.authorization.transactionId])).rows;
      const patched = await api(gateway, enrolled, 'PATCH', '/authorization-endpoint', { body: { timeoutMs: 1500 } });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      let first: ReturnType<typeof ask> | undefined;
      try {
        first = ask(body);
        await waitFor('the partner asked', () => sent().length === 1);
        // The partner is being asked: the claim is committed. A crash would lose it (its WAL not flushed yet).
        expect((await db.query('SELECT state FROM authorization_decisions WHERE authorization_id = $1', [body.id])).rows).to.deep.equal([{ state: 'deciding' }]);
        await db.query('DELETE FROM authorization_decisions WHERE authorization_id = $1', [body.id]);
        release();
        const lost = await first;
        expect(lost.status, 'its holder\'s recording finds its claim gone: nothing recorded, the stand-in applies').to.equal(503);
        expect(await recorded()).to.deep.equal([]);
        // The processor's retry after the crash: decided afresh, as after a crash before the claim.
        endpoint.behaviour = { kind: 'answer', body: { approved: true } };
        expect((await ask(body)).body).to.deep.equal({ approved: true });
        expect(await ask(body, { to: second }), 'a repeat of it').to.deep.equal({ status: 200, body: { approved: true } });
        expect(sent(), 'asked once per claim').to.have.length(2);
        expect(await recorded(), 'one transaction').to.deep.equal([{ status: 'PENDING' }]);
      } finally {
        release();
        await first?.catch(() => undefined);
        await db.close();
        const restored = await api(gateway, enrolled, 'PATCH', '/authorization-endpoint', { body: { timeoutMs: 400 } });
        expect(restored.status, JSON.stringify(restored.body)).to.equal(200);
      }
    });

    it('a hanging endpoint under 50 concurrent decisions is the partner\'s fault: no error line, at most one warn line per second with the count, every answer before the deadline', async () => {
      // The longest timeout: the calls take the whole budget, and their recordings come at its end.
      expect((await api(gateway, enrolled, 'PATCH', '/authorization-endpoint', { body: { timeoutMs: 1500 } })).status).to.equal(200);
      endpoint.behaviour = { kind: 'hang' };
      const from = gateway.logLines().length;
      try {
        const started = Date.now();
        const burst = `hang-${started.toString(36)}`;
        const answers = await Promise.all(
          Array.from({ length: 50 }, async (_, i) => {
            const body = request(cardKey);
            const sent = Date.now();
            const answer = await ask(body, { requestId: `${burst}-${i}` });
            return { ...answer, tookMs: Date.now() - sent };
          })
        );
        const burstMs = Date.now() - started;
        // The answer is due AUTHORIZATION_DEADLINE_MS - 300 ms (1,700) after the gateway read the
        // request: each one's time in the gateway (its access line) is that, plus its timer's
        // lateness on a loaded machine (119 ms seen in a full suite), and below the processor's
        // 2,000 ms deadline: the margin exists for that lateness.
        // At the client, the time also holds this machine's scheduling of 50 connections at once
        // and of the test process itself (817 ms more than the gateway's 1,700 seen in a full suite
        // of four workers on two cores): bounded there at 1.5 times the processor's 2,000 ms
        // deadline, which a gateway waiting for the hanging endpoint beyond its deadline, or for
        // anything else, would pass.
        await waitFor('every answer\'s access line', () => gateway.logLines().slice(from).filter((l) => String(l.requestId).startsWith(`${burst}-`)).length === 50);
        for (const line of gateway.logLines().slice(from).filter((l) => String(l.requestId).startsWith(`${burst}-`))) {
          expect(Number(line.latencyMs), `${line.requestId}: answered before the processor's 2,000 ms deadline`).to.be.below(2000);
        }
        for (const a of answers) {
          expect(a.tookMs, 'at the client: within 1.5 times the deadline').to.be.below(3000);
          // The endpoint's default (decline), or 503 when even that could not be recorded in time.
          if (a.status === 200) expect(a.body.declineReason).to.be.oneOf(['partner_timeout', 'partner_error']);
          else expect(a.body.code, JSON.stringify(a.body)).to.equal('decision_unavailable');
        }
        // The held faults are written when their second ends: every one of the 50 counted in some line.
        const faultLines = () => gateway.logLines().slice(from).filter((l) => l.msg === 'partner decision endpoint did not answer usably' && l.partnerId === enrolled.id);
        await waitFor('every fault counted in a line', () => faultLines().reduce((n, l) => n + Number(l.count), 0) === 50);
        const lines = faultLines();
        for (const l of lines) expect(l).to.include({ level: 'warn' }).and.not.have.property('err');
        expect(lines.length, `at most one line per second of the burst (${burstMs} ms) and its last second`).to.be.at.most(Math.ceil(burstMs / 1000) + 1);
        const errors = gateway.logLines().slice(from).filter((l) => l.level === 'error' || l.level === 'fatal');
        expect(errors, 'no error line: the partner\'s fault is not the gateway\'s').to.deep.equal([]);
      } finally {
        expect((await api(gateway, enrolled, 'PATCH', '/authorization-endpoint', { body: { timeoutMs: 400 } })).status).to.equal(200);
      }
    });

    it('with defaultDecision approve, a hanging endpoint approves (partner_default)', async () => {
      expect((await api(gateway, enrolled, 'PATCH', '/authorization-endpoint', { body: { defaultDecision: 'approve' } })).status).to.equal(200);
      try {
        endpoint.behaviour = { kind: 'hang' };
        const body = request(cardKey);
        expect((await ask(body)).body).to.deep.equal({ approved: true });
        expect((await decided(body)).authorization).to.include({ decidedBy: 'partner_default', rule: 'partner.timeout' });
      } finally {
        await api(gateway, enrolled, 'PATCH', '/authorization-endpoint', { body: { defaultDecision: 'decline' } });
      }
    });

    it('checks velocity before asking: a purchase over a rule is velocity_exceeded and never sent to the partner; the card sent is the stored card', async () => {
      const individual = await api(gateway, enrolled, 'POST', '/individual/accounts', { body: individualBody() });
      const card = await api(gateway, enrolled, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
      const key = card.body.cardKey;
      const put = await api(gateway, enrolled, 'PUT', `/cards/${key}/spend-controls`, { body: { velocity: [{ window: '1h', maxCount: 3 }, { window: '24h', maxAmount: 60 }] } });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      const sent = (body: ReturnType<typeof request>) => endpoint.received.filter((r) => r.body.data.authorization.id === body.id);
      const first = request(key, { amount: 25 });
      expect((await ask(first)).body).to.deep.equal({ approved: true });
      expect(sent(first)).to.have.length(1);
      expect(sent(first)[0].body.data.card).to.deep.include({ cardKey: key, cardMask: card.body.cardMask, status: card.body.status, createdAt: card.body.createdAt });
      const again = request(key, { amount: 25 });
      expect((await ask(again)).body).to.deep.equal({ approved: true });
      // 25 + 25 + 15 > 60: the 24h amount rule refuses, before the partner is asked.
      const overAmount = request(key, { amount: 15 });
      expect((await ask(overAmount)).body).to.deep.equal({ approved: false, declineReason: 'velocity_exceeded' });
      expect(sent(overAmount), 'not sent to the partner').to.have.length(0);
      expect((await decided(overAmount)).authorization).to.include({ decidedBy: 'spend_controls', rule: 'card.velocity[1].maxAmount' });
      const third = request(key, { amount: 5 });
      expect((await ask(third)).body).to.deep.equal({ approved: true });
      const overCount = request(key, { amount: 1 });
      expect((await ask(overCount)).body).to.deep.equal({ approved: false, declineReason: 'velocity_exceeded' });
      expect(sent(overCount), 'not sent to the partner').to.have.length(0);
      expect((await decided(overCount)).authorization).to.include({ decidedBy: 'spend_controls', rule: 'card.velocity[0].maxCount' });
      // The other instance decides this card for the first time (it reads the endpoint after its claim): the same.
      const onSecond = request(key, { amount: 1 });
      expect((await ask(onSecond, { to: second })).body).to.deep.equal({ approved: false, declineReason: 'velocity_exceeded' });
      expect(sent(onSecond), 'not sent to the partner').to.have.length(0);
    });
  });

  describe('operators', function () {
  it('shows decisions by outcome and who decided, their duration, and the partner endpoints\' calls on /admin/metrics', async () => {
    const text = await (await fetch(`${gateway.adminUrl}/admin/metrics`, { headers: { authorization: `Bearer ${gateway.adminToken}` } })).text();
    const sample = (name: string, labels: Record<string, string> = {}) => metricSample(text, name, labels);
    expect(sample('authorization_decisions_total', { outcome: 'approved', decided_by: 'approved' })).to.be.at.least(1);
    expect(sample('authorization_decisions_total', { outcome: 'declined', decided_by: 'card_state' })).to.be.at.least(1);
    expect(sample('authorization_decisions_total', { outcome: 'declined', decided_by: 'partner_default' })).to.be.at.least(1);
    expect(sample('authorization_decision_duration_seconds_count')).to.be.at.least(5);
    expect(sample('partner_decision_duration_seconds_count', { result: 'timeout' })).to.be.at.least(1);
    expect(sample('partner_decision_duration_seconds_count', { result: 'answered' })).to.be.at.least(1);
  });
  });

  it('with the database unreachable, answers 503 at once (the processor\'s stand-in applies without waiting), and decides the same id once it is back', async () => {
    const { cardKey } = await newCard();
    const body = request(cardKey);
    await link.cut();
    try {
      const started = Date.now();
      const down = await ask(body, { to: second });
      expect(down.status, JSON.stringify(down.body)).to.equal(503);
      // database_unavailable: the pool's own refusal, not the deadline's timer (decision_unavailable).
      expect(down.body.code, 'refused by the database layer, not at the deadline').to.equal('database_unavailable');
      expect(Date.now() - started, 'before AUTHORIZATION_DEADLINE_MS (2000)').to.be.below(2000);
    } finally {
      await link.restore();
    }
    expect((await ask(body)).body).to.deep.equal({ approved: true });
    expect((await transactionsOf(cardKey)).map((t) => t._id)).to.deep.equal([body.authorization.transactionId]);
  });

  it('a recording held behind a table lock (a migration, an index build) is answered 503 before the deadline, and rolls back once it has the lock: a repeat is then decided, once', async () => {
    const { cardKey } = await newCard();
    const body = request(cardKey);
    const locker = new Database(gateway.databaseUrl!, { max: 2, log: createLogger({ level: 'silent' }) });
    const blocked = () =>
      locker.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active' AND query LIKE '%authorization_velocity_gate%'`
      );
    let release: () => void = () => undefined;
    let held: Promise<unknown> = Promise.resolve();
    try {
      // The lock a migration's ALTER TABLE takes, held in a transaction of its own until released.
      let locked: () => void = () => undefined;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      held = locker.transaction(async (tx) => {
        await tx.query('LOCK TABLE audit_log IN ACCESS EXCLUSIVE MODE');
        locked();
        await new Promise<void>((resolve) => (release = resolve));
      });
      await isLocked;
      const started = Date.now();
      const answer = await ask(body);
      const tookMs = Date.now() - started;
      expect(answer.status, JSON.stringify(answer.body)).to.equal(503);
      expect(answer.body.code).to.equal('decision_unavailable');
      expect(tookMs, 'before AUTHORIZATION_DEADLINE_MS (2000)').to.be.below(2000);
      expect(Number((await blocked()).rows[0]!.n), 'the recording was still waiting for the lock when the 503 went out').to.equal(1);
      release();
      await held;
      // It runs once it has the lock, past its commit-by instant: refused by the database.
      await waitForLogLine(gateway, (l) => l.authorizationId === body.id && typeof l.msg === 'string' && l.msg.includes('refused by the database after its 503'));
      await waitFor('the late recording to finish', async () => Number((await blocked()).rows[0]!.n) === 0);
      const rows = await locker.query('SELECT 1 FROM authorization_decisions WHERE authorization_id = $1', [body.id]);
      expect(rows.rowCount, 'the late recording rolled back: no decision row').to.equal(0);
      expect(await transactionsOf(cardKey), 'nor a transaction').to.deep.equal([]);
    } finally {
      release();
      await held.catch(() => undefined);
      await locker.close();
    }
    expect(await ask(body)).to.deep.equal({ status: 200, body: { approved: true } });
    expect(await ask(body), 'its repeat').to.deep.equal({ status: 200, body: { approved: true } });
    expect((await transactionsOf(cardKey)).map((t) => t._id)).to.deep.equal([body.authorization.transactionId]);
  });

  it('a claim whose holder died is taken over once its lease ran out; a live one is waited for; an id is one card\'s', async () => {
    const { cardKey } = await newCard();
    const other = await newCard();
    const db = new Database(gateway.databaseUrl!, { max: 1, log: createLogger({ level: 'silent' }) });
    try {
      const claim = (id: string, leaseSeconds: number) =>
        db.query(
          `INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, claim_token, lease_until)
           VALUES ($1, 'dead0000000000000000dead', $2, 'deciding', 'a-dead-holder', now() + make_interval(secs => $3))`,
          [id, cardKey, leaseSeconds]
        );
      const dead = request(cardKey);
      await claim(dead.id, -1);
      expect((await ask(dead)).body, 'the expired claim is taken over and decided').to.deep.equal({ approved: true });
      expect((await transactionsOf(cardKey)).map((t) => t._id)).to.deep.equal([dead.authorization.transactionId]);
      const live = request(cardKey);
      await claim(live.id, 30);
      const waited = await ask(live);
      expect(waited.status, 'a live claim is waited for until the deadline: the stand-in applies').to.equal(503);
      expect(waited.body.code).to.equal('decision_unavailable');
      // A claim still deciding may not be durable yet (its commit does not wait for the flush): a
      // repeat naming another card is 503 (retryable), not the 400 a decided id gets, and decides nothing.
      for (const leaseSeconds of [30, -1]) {
        const deciding = request(cardKey);
        await claim(deciding.id, leaseSeconds);
        const elsewhere = await ask({ ...deciding, authorization: { ...deciding.authorization, cardId: other.cardKey } });
        expect(elsewhere.status, `another card's repeat of a deciding claim (lease ${leaseSeconds} s)`).to.equal(503);
        expect(elsewhere.body.code).to.equal('decision_unavailable');
        expect((await db.query('SELECT state, card_key, claim_token FROM authorization_decisions WHERE authorization_id = $1', [deciding.id])).rows).to.deep.equal([{ state: 'deciding', card_key: cardKey, claim_token: 'a-dead-holder' }]);
      }
    } finally {
      await db.close();
    }
    const first = request(cardKey);
    expect((await ask(first)).status).to.equal(200);
    const reused = await ask({ ...first, authorization: { ...first.authorization, cardId: other.cardKey } });
    expect(reused.status, 'the same authorization id for another card').to.equal(400);
    expect(await transactionsOf(other.cardKey)).to.deep.equal([]);
  });

  it('the decision trace (a diagnostic): a line per decision with the process id when on; a file that cannot be written is logged once and the instance goes on deciding', async () => {
    const { cardKey } = await newCard();
    const body = request(cardKey);
    expect((await ask(body)).body).to.deep.equal({ approved: true });
    const traced = await waitFor('the decision\'s trace line', () =>
      fs
        .readFileSync(traceFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.id === body.id)
    );
    expect(traced).to.include({ pid: gateway.child.pid });
    for (const step of ['request', 'handler', 'claimSent', 'claimDone', 'decided', 'written']) expect(traced[step], step).to.be.a('number');
    // The event loop's line each second: the process-wide records are on too, with the pid.
    await waitFor('an event-loop line', () => fs.readFileSync(traceFile, 'utf8').split('\n').filter(Boolean).some((l) => 'eld' in JSON.parse(l) && JSON.parse(l).pid === gateway.child.pid));

    const failed = await waitForLogLine(second, (l) => l.msg === 'AUTHORIZATION_TRACE_FILE cannot be written: the decision trace is off');
    expect(failed).to.include({ level: 'error', code: 'EISDIR', file: traceDir });
    // Past the first second (when the event loop's line would be written) and after a decision: alive, deciding, one error line.
    const other = request(cardKey);
    await waitFor('the second instance up for more than a second', () => Date.now() - secondReadyAt >= 1500);
    expect((await ask(other, { to: second })).body).to.deep.equal({ approved: true });
    expect(second.child.exitCode, 'the instance with the unwritable trace file still runs').to.equal(null);
    expect(second.logLines().filter((l) => l.msg === failed.msg)).to.have.length(1);
  });

  it('refuses a forged, cross-upstream or stale request (401) and an invalid one (400), deciding and recording nothing', async () => {
    const { cardKey } = await newCard();
    const body = request(cardKey);
    const raw = JSON.stringify(body);
    expect((await ask(body, { signature: sign(raw, undefined, crypto.randomBytes(32).toString('base64url')) })).status).to.equal(401);
    expect((await ask(body, { signature: sign(raw, undefined, ISSUER_SECRET) })).status, 'the issuer\'s secret').to.equal(401);
    expect((await ask(body, { signature: sign(raw, Math.floor(Date.now() / 1000) - 301) })).status, 'stale').to.equal(401);
    for (const bad of [{ amount: -1 }, { currency: 'euro' }, { type: 'REFUND' }, { merchant: { name: 'x', mcc: '54', city: 'y', country: 'DE' } }, { at: 'yesterday' }, { id: 'another' }]) {
      const r = await ask({ ...body, authorization: { ...body.authorization, ...bad } });
      expect(r.status, JSON.stringify(bad)).to.equal(400);
    }
    expect(await transactionsOf(cardKey)).to.deep.equal([]);
    // The same id, well signed, is still undecided: it is decided now.
    expect((await ask(body)).body).to.deep.equal({ approved: true });
  });

  it('the partner\'s simulated authorization goes through the decision: a locked card\'s is DECLINED card_locked, an active card\'s PENDING', async () => {
    const { cardKey, expDate } = await newCard();
    const approved = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/authorizations`, { body: { amount: 10 } });
    expect(approved.status, JSON.stringify(approved.body)).to.equal(201);
    expect(approved.body).to.deep.include({ status: 'PENDING', authorization: { decidedBy: 'approved' } });
    expect((await api(gateway, partner, 'POST', `/cards/${cardKey}/temporary-lock`, { body: { expDate } })).status).to.equal(200);
    const declined = await api(gateway, partner, 'POST', `/simulate/cards/${cardKey}/authorizations`, { body: { amount: 10 } });
    expect(declined.status, JSON.stringify(declined.body)).to.equal(201);
    expect(declined.body).to.deep.include({ status: 'DECLINED', declineReason: 'card_locked', authorization: { decidedBy: 'card_state', rule: 'card.status.TEMP_LOCKED' } });
  });
});
