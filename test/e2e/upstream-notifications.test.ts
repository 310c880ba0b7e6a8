import crypto from 'node:crypto';
import { expect } from 'chai';
import { api, cardBody, individualBody, sandboxUrls } from '../support/api';
import { sharedGateway, type SharedGateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';

function sign(secret: string, raw: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
}

/**
 * The upstreams' notifications to the gateway (docs/upstreams.md, section 9), sent here as a real
 * issuer or processor would: signed, on the notification listener, never on the partner port.
 */
describe('e2e: inbound notifications from the upstreams', function () {
  this.timeout(60_000);
  // The run's shared gateway: its notification secrets are made for the run, and every card here is this file's partner's.
  let gateway: SharedGateway;
  let partner: TestPartner;
  let issuerSecret: string;
  let processingSecret: string;

  const notify = async (upstream: 'issuer' | 'processing', body: Record<string, unknown>, options: { signature?: string; t?: number } = {}) => {
    const raw = JSON.stringify(body);
    const secret = upstream === 'issuer' ? issuerSecret : processingSecret;
    const response = await fetch(`${gateway.notifyUrl}/upstream-notifications/${upstream}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'upstream-notification-id': String(body.id), 'upstream-signature': options.signature ?? sign(secret, raw, options.t) },
      body: raw,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
  const newCard = async () => {
    const individual = await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status).to.equal(201);
    const card = await api(gateway, partner, 'POST', `/individual/accounts/${individual.body._id}/cards/virtual`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return { individualId: individual.body._id as string, cardKey: card.body.cardKey as string, expDate: card.body.expDate as string };
  };
  const eventsOf = async (type: string) => {
    const page = await api(gateway, partner, 'GET', `/events?type=${type}&limit=100`);
    expect(page.status, JSON.stringify(page.body)).to.equal(200);
    return page.body.data as any[];
  };
  const id = () => `ntf_${crypto.randomBytes(12).toString('hex')}`;
  const issuerNotification = (cardKey: string, statusCode: string, reason: string | null = 'fraud suspected') => ({
    id: id(),
    type: 'card.status_changed',
    occurredAt: new Date().toISOString(),
    cardKey,
    previousStatusCode: '00',
    statusCode,
    reason,
  });
  const transaction = (cardKey: string, accountId: string | null) => ({
    id: crypto.randomBytes(12).toString('hex'),
    cardId: cardKey,
    accountId,
    amount: 12.5,
    currency: 'EUR',
    type: 'PURCHASE',
    status: 'PENDING',
    merchant: { name: 'Corner Shop', mcc: '5411', city: 'Berlin', country: 'DE', terminal: 'not for partners' },
    createdAt: new Date().toISOString(),
  });

  before(async () => {
    gateway = await sharedGateway();
    ({ issuer: issuerSecret, processing: processingSecret } = gateway.notifySecrets);
    partner = await registerPartner(gateway);
  });

  it('listens on a port of its own, logged in the ready line, that no partner route reaches', async () => {
    expect(gateway.notifyUrl, 'notifyPort in "gateway ready"').to.be.a('string');
    expect(new URL(gateway.notifyUrl!).port).to.not.equal(new URL(gateway.baseUrl).port);
    for (const path of ['/upstream-notifications/issuer', '/api/partner/upstream-notifications/issuer']) {
      const onPartnerPort = await fetch(`${gateway.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(onPartnerPort.status, path).to.equal(404);
    }
    const partnerRouteHere = await fetch(`${gateway.notifyUrl}/api/partner/me`, { headers: { authorization: `Bearer ${await partner.token()}` } });
    expect(partnerRouteHere.status).to.equal(404);
  });

  it('refuses a missing, wrong or cross-upstream signature and a stale or future t (401), applying nothing', async () => {
    const { cardKey } = await newCard();
    const body = issuerNotification(cardKey, 'S5');
    const raw = JSON.stringify(body);
    expect((await notify('issuer', body, { signature: '' })).status).to.equal(401);
    expect((await notify('issuer', body, { signature: sign('another secret of at least thirty-two chars', raw) })).status).to.equal(401);
    expect((await notify('issuer', body, { signature: sign(processingSecret, raw) })).status, "the processor's secret").to.equal(401);
    const now = Math.floor(Date.now() / 1000);
    expect((await notify('issuer', body, { t: now - 301 })).status, 'stale').to.equal(401);
    // 60 s past the 300 s window: the gateway reads its clock later than `now` (seconds later on a
    // loaded machine), which brings a future t closer to its window, never a stale one.
    expect((await notify('issuer', body, { t: now + 360 })).status, 'future').to.equal(401);
    const card = await api(gateway, partner, 'GET', `/cards/${cardKey}`);
    expect(card.body.statusCode).to.equal('00');
  });

  it('applies an issuer status change once: record, history, audit and one card.status_changed event with source issuer', async () => {
    const { cardKey, expDate, individualId } = await newCard();
    // The issuer changes the card on its own: the gateway does not know until notified.
    const changed = await fetch(`${sandboxUrls(gateway).issuer}/cards/${cardKey}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'fraud', expDate, reason: 'fraud team' }),
    });
    expect(changed.status).to.equal(200);
    const body = issuerNotification(cardKey, 'S5', 'fraud team');
    const first = await notify('issuer', body);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body).to.deep.equal({ received: true, duplicate: false, outcome: 'applied' });
    const again = await notify('issuer', body);
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.include({ duplicate: true });

    const card = await api(gateway, partner, 'GET', `/cards/${cardKey}`);
    expect(card.body).to.include({ status: 'FRAUD', statusCode: 'S5' });
    const events = (await eventsOf('card.status_changed')).filter((e) => e.data.cardKey === cardKey);
    expect(events).to.have.length(1);
    expect(events[0].data).to.include({ source: 'issuer', status: 'FRAUD', statusCode: 'S5', previousStatus: 'ACTIVE', reason: 'fraud team' });
    const history = await api(gateway, partner, 'GET', `/individual/accounts/${individualId}/card-status-history?limit=100`);
    expect(history.status, JSON.stringify(history.body)).to.equal(200);
    expect(JSON.stringify(history.body)).to.include('fraud team');
    const audit = await api(gateway, partner, 'GET', `/individual/accounts/${individualId}/audit-logs?limit=100`);
    expect(audit.status, JSON.stringify(audit.body)).to.equal(200);
    const entry = (audit.body.data as any[]).find((e) => e.operation === 'card.issuer-sync' && e.targetId === cardKey);
    expect(entry, JSON.stringify(audit.body.data)).to.exist;
    expect(entry.details).to.include({ source: 'issuer', notificationId: body.id, to: 'S5' });
  });

  it('answers 200 unknown_card for a card the gateway does not hold, and 400 for an invalid body', async () => {
    const unknownIssuer = await notify('issuer', issuerNotification('CK-not-ours-1', 'S5'));
    expect(unknownIssuer.status).to.equal(200);
    expect(unknownIssuer.body.outcome).to.equal('unknown_card');
    const unknownProcessing = await notify('processing', { id: id(), type: 'transaction.created', occurredAt: new Date().toISOString(), transaction: transaction('CK-not-ours-2', null) });
    expect(unknownProcessing.status).to.equal(200);
    expect(unknownProcessing.body.outcome).to.equal('unknown_card');
    const invalid = await notify('issuer', { id: id(), type: 'card.status_changed', occurredAt: new Date().toISOString(), cardKey: 'x', statusCode: 'nope' });
    expect(invalid.status).to.equal(400);
  });

  it('emits one transaction.created event per processing notification, in the transactions list shape', async () => {
    const { cardKey, individualId } = await newCard();
    const t = transaction(cardKey, '12345678');
    const body = { id: id(), type: 'transaction.created', occurredAt: t.createdAt, transaction: t };
    const first = await notify('processing', body);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body).to.deep.equal({ received: true, duplicate: false, outcome: 'applied' });
    expect((await notify('processing', body)).body.duplicate).to.equal(true);
    const events = (await eventsOf('transaction.created')).filter((e) => e.data.transaction.cardKey === cardKey);
    expect(events).to.have.length(1);
    expect(events[0].data.transaction).to.deep.equal({
      _id: t.id,
      cardKey,
      amount: 12.5,
      currency: 'EUR',
      type: 'PURCHASE',
      status: 'PENDING',
      merchant: { name: 'Corner Shop', mcc: '5411', city: 'Berlin', country: 'DE' },
      createdAt: t.createdAt,
      // A notification of today's shape, without the lifecycle fields, is read as a one-step transaction.
      individualId,
      updatedAt: t.createdAt,
      settledAmount: null,
      declineReason: null,
      relatedTransactionId: null,
      history: [{ kind: 'authorization', amount: 12.5, at: t.createdAt }],
      authorization: null,
    });
    const detail = await api(gateway, partner, 'GET', `/transactions/${t.id}`);
    expect(detail.body).to.deep.equal(events[0].data.transaction);
  });

  // A transaction's state after each step, as the processor notifies it (docs/upstreams.md, section 9).
  const lifecycle = (cardKey: string) => {
    const base = { ...transaction(cardKey, '12345678'), merchant: { name: 'Corner Shop', mcc: '5411', city: 'Berlin', country: 'DE' } };
    const at = (s: number) => new Date(Date.parse(base.createdAt) + s * 1000).toISOString();
    const authorization = { kind: 'authorization', amount: 50, at: at(0) };
    const reversal = { kind: 'reversal', amount: 10, at: at(1) };
    const clearing = { kind: 'clearing', amount: 38, at: at(2) };
    const common = { ...base, amount: 50, authorizationId: `auth_${base.id}`, relatedTransactionId: null, declineReason: null };
    return [
      { ...common, status: 'PENDING', version: 1, updatedAt: at(0), settledAmount: null, history: [authorization] },
      { ...common, status: 'PENDING', amount: 40, version: 2, updatedAt: at(1), settledAmount: null, history: [authorization, reversal] },
      { ...common, status: 'SETTLED', amount: 40, version: 3, updatedAt: at(2), settledAmount: 38, history: [authorization, reversal, clearing] },
    ];
  };
  const stepNotification = (state: Record<string, unknown>, version: number) => ({
    id: id(),
    type: version === 1 ? 'transaction.created' : 'transaction.updated',
    occurredAt: (state.updatedAt as string),
    ...(version === 1 ? {} : { change: (state.history as { kind: string }[])[version - 1].kind }),
    transaction: state,
  });
  /** The transaction's events, oldest first (the event log answers newest first). */
  const transactionEvents = async (transactionId: string) => {
    const page = await api(gateway, partner, 'GET', '/events?limit=100');
    return (page.body.data as any[]).filter((e) => e.data.transaction?._id === transactionId).reverse();
  };

  it('notifications arriving newest first end in the newest state, with one event per step in the history\'s order', async () => {
    const { cardKey } = await newCard();
    const states = lifecycle(cardKey);
    const notifications = states.map((state, i) => stepNotification(state, i + 1));
    const outcomes = [];
    for (const n of [...notifications].reverse()) outcomes.push((await notify('processing', n)).body.outcome);
    expect(outcomes, 'the clearing first, then the late reversal and authorization').to.deep.equal(['applied', 'unchanged', 'unchanged']);
    const detail = await api(gateway, partner, 'GET', `/transactions/${states[0].id}`);
    expect(detail.body).to.deep.include({ status: 'SETTLED', amount: 40, settledAmount: 38 });
    expect(detail.body.history.map((s: any) => s.kind)).to.deep.equal(['authorization', 'reversal', 'clearing']);
    const events = await transactionEvents(states[0].id);
    expect(events.map((e) => [e.type, e.data.change ?? null, e.data.previousStatus ?? null])).to.deep.equal([
      ['transaction.created', null, null],
      ['transaction.updated', 'reversal', 'PENDING'],
      ['transaction.updated', 'clearing', 'PENDING'],
    ]);
  });

  it('a repeated notification, under its id or another, changes nothing: no second transaction, no second event', async () => {
    const { cardKey } = await newCard();
    const states = lifecycle(cardKey);
    const created = stepNotification(states[0], 1);
    expect((await notify('processing', created)).body.outcome).to.equal('applied');
    expect((await notify('processing', created)).body).to.deep.include({ duplicate: true, outcome: 'duplicate' });
    expect((await notify('processing', { ...created, id: id() })).body.outcome, 'the same state under another id').to.equal('unchanged');
    const reversal = stepNotification(states[1], 2);
    expect((await notify('processing', reversal)).body.outcome).to.equal('applied');
    expect((await notify('processing', { ...created, id: id() })).body.outcome, 'an older state').to.equal('unchanged');
    const list = await api(gateway, partner, 'GET', `/transactions?cardKey=${cardKey}`);
    expect(list.body.data.map((t: any) => [t._id, t.status, t.amount])).to.deep.equal([[states[0].id, 'PENDING', 40]]);
    expect((await transactionEvents(states[0].id)).map((e) => e.type)).to.deep.equal(['transaction.created', 'transaction.updated']);
  });

  it('refuses a transaction notification whose lifecycle fields are malformed (400), applying nothing', async () => {
    const { cardKey } = await newCard();
    const [first] = lifecycle(cardKey);
    const bad: Record<string, unknown>[] = [
      { ...first, status: 'LOST' },
      { ...first, history: [{ kind: 'teleport', amount: 1, at: first.createdAt }] },
      { ...first, version: 2 },
      { ...first, history: [] },
      { ...first, id: 'has space' },
    ];
    for (const t of bad) {
      const r = await notify('processing', { id: id(), type: 'transaction.created', occurredAt: first.createdAt, transaction: t });
      expect(r.status, JSON.stringify(t)).to.equal(400);
    }
    expect((await notify('processing', { id: id(), type: 'transaction.deleted', occurredAt: first.createdAt, transaction: first })).status).to.equal(400);
    expect((await api(gateway, partner, 'GET', `/transactions?cardKey=${cardKey}`)).body.data).to.deep.equal([]);
  });

  it('the issuer sandbox notifies a status change it makes on its own: card.status_changed with source issuer', async () => {
    const { cardKey } = await newCard();
    const response = await fetch(`${sandboxUrls(gateway).issuer}/__sandbox/cards/${cardKey}/issuer-status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ statusCode: 'S2', reason: 'reported lost at branch' }),
    });
    const answer = await response.json();
    expect(response.status, JSON.stringify(answer)).to.equal(200);
    expect(answer).to.deep.include({ cardKey, statusCode: 'S2', previousStatusCode: '00', notified: true });
    const events = (await eventsOf('card.status_changed')).filter((e) => e.data.cardKey === cardKey);
    expect(events).to.have.length(1);
    expect(events[0].data).to.include({ source: 'issuer', status: 'LOST', statusCode: 'S2', reason: 'reported lost at branch' });
  });

  it('the processing sandbox records a transaction, lists it and notifies it: transaction.created', async () => {
    const { cardKey, individualId } = await newCard();
    const response = await fetch(`${sandboxUrls(gateway).processing}/__sandbox/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cardId: cardKey, amount: 42.1, currency: 'EUR', type: 'decline', merchant: { name: 'Kiosk', mcc: '5994', country: 'AT' } }),
    });
    const recorded = (await response.json()) as any;
    expect(response.status, JSON.stringify(recorded)).to.equal(201);
    expect(recorded).to.include({ cardId: cardKey, status: 'DECLINED', declineReason: 'do_not_honor', amount: 42.1 });
    const list = await api(gateway, partner, 'GET', `/individual/accounts/${individualId}/transactions?limit=5`);
    expect(list.status, JSON.stringify(list.body)).to.equal(200);
    expect(list.body.data[0]).to.include({ _id: recorded.id, cardKey, status: 'DECLINED' });
    const events = (await eventsOf('transaction.created')).filter((e) => e.data.transaction._id === recorded.id);
    expect(events).to.have.length(1);
    expect(events[0].data.transaction).to.deep.equal(list.body.data[0]);
  });
});
