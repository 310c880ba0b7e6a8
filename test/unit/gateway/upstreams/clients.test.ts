import { expect } from 'chai';
import { createUpstreamClients, upstreamPath, type CallContext, type UpstreamClients, type UpstreamName, type UpstreamRequest } from '../../../../gateway/upstreams';
import { captureLogger, MOCK_URLS, useMockAgent } from './helpers';

interface MethodCase {
  name: string;
  upstream: UpstreamName;
  call: (clients: UpstreamClients, ctx: CallContext) => Promise<unknown>;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  /** Exact path and query as sent (encoded). */
  uri: string;
  /** Exact JSON body expected; undefined = no body at all. */
  body?: unknown;
  status?: number;
  reply: unknown;
  /** What the method resolves to, when it is not `reply`. */
  expected?: unknown;
}

const CARD = { cardKey: 'CK1', cardMask: '5355 70** **** 1234', type: 'virtual', statusCode: '00', currency: 'EUR', productCode: 'P', holderClientCode: '48213377', expDate: '12/2031', embossedName: '', createdAt: '2026-03-01T10:15:00.000Z' };
const LIMIT = { name: 'dailyPurchase', value: 2000, currency: 'EUR', used: 10, available: 1990 };
const ACCOUNT = { accountId: '65f1c0de0000000000000001', clientId: '48213377', status: 'CREATED', partnerId: 'p1', onboardingId: 'o1', baasAccountClientId: null, individual: {}, createdAt: '2026-03-01T10:15:00.000Z' };
const SECURITY_KEY = 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA+u/w==';
const ENCODED_KEY = encodeURIComponent(SECURITY_KEY);
const INDIVIDUAL = {
  partnerId: 'p1', onboardingId: 'o1', baasAccountClientId: 7, firstName: 'Ada', middleName: 'Au', lastName: 'Lovelace', country: 'GB',
  birthDate: '1815-12-10', email: 'ada@example.com', phone: '+441234', idType: 'PASSPORT' as const, passportNumber: 'X1', city: 'London',
};

/** A call the `upstream-proxy` policy makes through the upstream's HTTP client (its transform picks and checks the fields). */
const proxied =
  (upstream: UpstreamName, request: UpstreamRequest) =>
  (c: UpstreamClients, ctx: CallContext): Promise<unknown> =>
    c.http[upstream].request(ctx, { ...request, fieldsCheckedByCaller: true });

const cases: MethodCase[] = [
  // accounts (section 4)
  { name: 'accounts.createAccount', upstream: 'accounts', call: (c, ctx) => c.accounts.createAccount(ctx, INDIVIDUAL), method: 'POST', uri: '/accounts', body: INDIVIDUAL, status: 201, reply: { accountId: ACCOUNT.accountId, clientId: '48213377', status: 'CREATED' } },
  { name: 'accounts.findByOnboardingId (found)', upstream: 'accounts', call: (c, ctx) => c.accounts.findByOnboardingId(ctx, 'o 1/&x'), method: 'GET', uri: '/accounts?onboardingId=o+1%2F%26x', reply: { data: [ACCOUNT] }, expected: ACCOUNT },
  { name: 'accounts.findByOnboardingId (none)', upstream: 'accounts', call: (c, ctx) => c.accounts.findByOnboardingId(ctx, 'o2'), method: 'GET', uri: '/accounts?onboardingId=o2', reply: { data: [] }, expected: undefined },
  // issuer (section 5)
  {
    name: 'issuer.createCard', upstream: 'issuer',
    call: (c, ctx) => c.issuer.createCard(ctx, { type: 'physical', clientCode: '48213377', expDate: '12/2031', currency: 'EUR', productCode: 'P', embossedName: 'ADA', shippingAddressId: 'a1' }),
    method: 'POST', uri: '/cards', body: { type: 'physical', clientCode: '48213377', expDate: '12/2031', currency: 'EUR', productCode: 'P', embossedName: 'ADA', shippingAddressId: 'a1' }, status: 201, reply: CARD,
  },
  {
    name: 'issuer.createCard (only contract fields travel)', upstream: 'issuer',
    call: (c, ctx) => c.issuer.createCard(ctx, { type: 'virtual', clientCode: '1', expDate: '12/2031', currency: 'EUR', productCode: 'P', nickname: 'not for the issuer' } as never),
    method: 'POST', uri: '/cards', body: { type: 'virtual', clientCode: '1', expDate: '12/2031', currency: 'EUR', productCode: 'P' }, status: 201, reply: CARD,
  },
  { name: 'issuer.getCard', upstream: 'issuer', call: (c, ctx) => c.issuer.getCard(ctx, 'CK/1'), method: 'GET', uri: '/cards/CK%2F1', reply: CARD },
  { name: 'issuer.getStatus', upstream: 'issuer', call: (c, ctx) => c.issuer.getStatus(ctx, 'CK1'), method: 'GET', uri: '/cards/CK1/status', reply: { cardKey: 'CK1', statusCode: '00' } },
  {
    name: 'issuer.changeStatus', upstream: 'issuer',
    call: (c, ctx) => c.issuer.changeStatus(ctx, 'CK1', { action: 'lost', expDate: '12/2031', reason: 'r', description: 'd', cardLocation: 'Berlin' }),
    method: 'POST', uri: '/cards/CK1/status', body: { action: 'lost', expDate: '12/2031', reason: 'r', description: 'd', cardLocation: 'Berlin' }, reply: { cardKey: 'CK1', statusCode: 'S2', previousStatusCode: '00' },
  },
  { name: 'issuer.changeStatus (optional fields left out)', upstream: 'issuer', call: (c, ctx) => c.issuer.changeStatus(ctx, 'CK1', { action: 'restrict' }), method: 'POST', uri: '/cards/CK1/status', body: { action: 'restrict' }, reply: { cardKey: 'CK1', statusCode: 'S1', previousStatusCode: '00' } },
  { name: 'issuer.setEmbossName', upstream: 'issuer', call: (c, ctx) => c.issuer.setEmbossName(ctx, 'CK1', 'ADA'), method: 'PATCH', uri: '/cards/CK1/emboss-name', body: { embossedName: 'ADA' }, reply: CARD },
  { name: 'issuer.replace', upstream: 'issuer', call: (c, ctx) => c.issuer.replace(ctx, 'CK1', { expDate: '12/2032', reason: 'broken', pinMailer: 'PM-1' }), method: 'POST', uri: '/cards/CK1/replace', body: { expDate: '12/2032', reason: 'broken', pinMailer: 'PM-1' }, status: 201, reply: { cardKey: 'CK2' } },
  { name: 'issuer.reissue', upstream: 'issuer', call: (c, ctx) => c.issuer.reissue(ctx, 'CK1', { expDate: '12/2032' }), method: 'POST', uri: '/cards/CK1/reissue', body: { expDate: '12/2032' }, status: 201, reply: { cardKey: 'CK3' } },
  { name: 'proxied issuer GET /cards/{cardKey}/cvv', upstream: 'issuer', call: proxied('issuer', { method: 'GET', path: upstreamPath`/cards/${'CK1'}/cvv`, query: { expDate: '12/2031', securityKey: SECURITY_KEY } }), method: 'GET', uri: `/cards/CK1/cvv?expDate=12%2F2031&securityKey=${ENCODED_KEY}`, reply: { cvv: 'Y2lwaGVy' } },
  { name: 'proxied issuer GET /cards/{cardKey}/pan', upstream: 'issuer', call: proxied('issuer', { method: 'GET', path: upstreamPath`/cards/${'CK1'}/pan`, query: { expDate: '12/2031', securityKey: SECURITY_KEY } }), method: 'GET', uri: `/cards/CK1/pan?expDate=12%2F2031&securityKey=${ENCODED_KEY}`, reply: { cardNumber: 'Y2lwaGVy' } },
  { name: 'issuer.setThreeDsAnswer', upstream: 'issuer', call: (c, ctx) => c.issuer.setThreeDsAnswer(ctx, 'CK1', 'blue'), method: 'PUT', uri: '/cards/CK1/3ds/answer', body: { answer: 'blue' }, reply: CARD },
  { name: 'proxied issuer GET /pin-encryption-key', upstream: 'issuer', call: proxied('issuer', { method: 'GET', path: '/pin-encryption-key' }), method: 'GET', uri: '/pin-encryption-key', reply: { keyId: 'pin-0123456789abcdef', algorithm: 'RSA-OAEP-256', publicKey: '-----BEGIN PUBLIC KEY-----\n' } },
  { name: 'issuer.resetPinTries', upstream: 'issuer', call: (c, ctx) => c.issuer.resetPinTries(ctx, 'CK1'), method: 'POST', uri: '/cards/CK1/pin/reset-tries', body: undefined, reply: CARD },
  { name: 'issuer.changePin', upstream: 'issuer', call: (c, ctx) => c.issuer.changePin(ctx, 'CK1', { expDate: '12/2031', pin: 'UElO' }), method: 'POST', uri: '/cards/CK1/pin/change', body: { expDate: '12/2031', pin: 'UElO' }, reply: CARD },
  { name: 'issuer.forcePinLock', upstream: 'issuer', call: (c, ctx) => c.issuer.forcePinLock(ctx, 'CK1', { expDate: '12/2031' }), method: 'POST', uri: '/cards/CK1/pin/force-lock', body: { expDate: '12/2031' }, reply: { cardKey: 'CK1', statusCode: 'L1' } },
  { name: 'issuer.authorize', upstream: 'issuer', call: (c, ctx) => c.issuer.authorize(ctx, 'CK1', { pin: 'UElO' }), method: 'POST', uri: '/cards/CK1/authorize', body: { pin: 'UElO' }, reply: CARD },
  { name: 'proxied issuer GET /cards/{cardKey}/limits', upstream: 'issuer', call: proxied('issuer', { method: 'GET', path: upstreamPath`/cards/${'CK1'}/limits` }), method: 'GET', uri: '/cards/CK1/limits', reply: [LIMIT] },
  { name: 'issuer.patchLimits', upstream: 'issuer', call: (c, ctx) => c.issuer.patchLimits(ctx, 'CK1', [{ name: 'dailyPurchase', value: 100 }, { name: 'singleTransaction', value: 50.5 }]), method: 'PATCH', uri: '/cards/CK1/limits', body: [{ name: 'dailyPurchase', value: 100 }, { name: 'singleTransaction', value: 50.5 }], reply: [LIMIT] },
  { name: 'issuer.setLimit', upstream: 'issuer', call: (c, ctx) => c.issuer.setLimit(ctx, 'CK1', 'dailyPurchase', { name: 'dailyPurchase', value: 100 }), method: 'PUT', uri: '/cards/CK1/limits/dailyPurchase', body: { name: 'dailyPurchase', value: 100 }, reply: LIMIT },
  { name: 'proxied issuer GET /cards/{cardKey}/limits/{name}', upstream: 'issuer', call: proxied('issuer', { method: 'GET', path: upstreamPath`/cards/${'CK1'}/limits/${'daily Purchase/..'}` }), method: 'GET', uri: '/cards/CK1/limits/daily%20Purchase%2F..', reply: LIMIT },
  { name: 'proxied issuer GET /cards/{cardKey}/limits/{name}/available', upstream: 'issuer', call: proxied('issuer', { method: 'GET', path: upstreamPath`/cards/${'CK1'}/limits/${'dailyPurchase'}/available` }), method: 'GET', uri: '/cards/CK1/limits/dailyPurchase/available', reply: { available: 1990 } },
  // processing (section 6)
  { name: 'processing.listTransactions', upstream: 'processing', call: (c, ctx) => c.processing.listTransactions(ctx, { accountId: '48213377', cardId: 'CK1', page: 2, limit: 50 }), method: 'GET', uri: '/transactions?accountId=48213377&cardId=CK1&page=2&limit=50', reply: { data: [], total: 0, page: 2, limit: 50 } },
  { name: 'processing.listTransactions (account only)', upstream: 'processing', call: (c, ctx) => c.processing.listTransactions(ctx, { accountId: 'a b', page: 1, limit: 20 }), method: 'GET', uri: '/transactions?accountId=a+b&page=1&limit=20', reply: { data: [], total: 0, page: 1, limit: 20 } },
  {
    name: 'proxied processing POST /fees', upstream: 'processing',
    call: proxied('processing', { method: 'POST', path: '/fees', body: { OperationType: 'CARD_DELIVERY_FEE', CustomerType: 'Consumer Debit', ProductType: 'R002', iban: 'DE89370400440532013000' } }),
    method: 'POST', uri: '/fees', body: { OperationType: 'CARD_DELIVERY_FEE', CustomerType: 'Consumer Debit', ProductType: 'R002', iban: 'DE89370400440532013000' },
    reply: { OperationType: 'CARD_DELIVERY_FEE', CustomerType: 'Consumer Debit', ProductType: 'R002', fee: 3.5, currency: 'EUR' },
  },
  { name: 'proxied processing GET /delivery-methods', upstream: 'processing', call: proxied('processing', { method: 'GET', path: '/delivery-methods', query: { country: 'DE' } }), method: 'GET', uri: '/delivery-methods?country=DE', reply: { success: true, country: 'DE', deliveryMethods: [] } },
  { name: 'processing.statusUpdate', upstream: 'processing', call: (c, ctx) => c.processing.statusUpdate(ctx, { cardKey: 'CK1', statusCode: 'L1', reason: 'reissue' }), method: 'POST', uri: '/cards/status-update', body: { cardKey: 'CK1', statusCode: 'L1', reason: 'reissue' }, reply: { accepted: true } },
  {
    name: 'processing.cardCreated', upstream: 'processing',
    call: (c, ctx) => c.processing.cardCreated(ctx, { event: 'card_created', cardKey: 'CK2', previousCardKey: 'CK1', cardMask: '5355 70** **** 1234', type: 'physical', ownerType: 'individual', ownerId: 'o1', partnerId: 'p1', occurredAt: '2026-03-01T10:15:00.000Z', accountId: '48213377' }),
    method: 'POST', uri: '/webhooks/card-created',
    body: { event: 'card_created', cardKey: 'CK2', previousCardKey: 'CK1', cardMask: '5355 70** **** 1234', type: 'physical', ownerType: 'individual', ownerId: 'o1', partnerId: 'p1', occurredAt: '2026-03-01T10:15:00.000Z', accountId: '48213377' },
    status: 202, reply: { received: true },
  },
  { name: 'processing.getTransaction', upstream: 'processing', call: (c, ctx) => c.processing.getTransaction(ctx, 'a1/..'), method: 'GET', uri: '/transactions/a1%2F..', reply: { id: 'a1', cardId: 'CK1' } },
  { name: 'processing.transactionChanges', upstream: 'processing', call: (c, ctx) => c.processing.transactionChanges(ctx, 'b0.12', 100), method: 'GET', uri: '/transactions/changes?after=b0.12&limit=100', reply: { data: [], nextCursor: 'b0.12' } },
  { name: 'processing.transactionChanges (from the start)', upstream: 'processing', call: (c, ctx) => c.processing.transactionChanges(ctx, undefined, 5), method: 'GET', uri: '/transactions/changes?limit=5', reply: { data: [], nextCursor: 'b0.0' } },
  // the sandboxes' control routes behind the simulate routes (sandbox mode only, docs/sandbox.md)
  {
    name: 'issuer.simulateStatus', upstream: 'issuer',
    call: (c, ctx) => c.issuer.simulateStatus(ctx, 'CK1', { statusCode: 'S5', reason: 'fraud team' }),
    method: 'POST', uri: '/__sandbox/cards/CK1/issuer-status', body: { statusCode: 'S5', reason: 'fraud team' },
    reply: { cardKey: 'CK1', statusCode: 'S5', previousStatusCode: '00' },
  },
  {
    name: 'processing.simulateTransaction (only the control route\'s fields travel)', upstream: 'processing',
    call: (c, ctx) => c.processing.simulateTransaction(ctx, { cardId: 'CK1', amount: 12.5, currency: 'EUR', type: 'clearing', merchant: { name: 'Cafe', mcc: '5814', country: 'DE', extra: 'x' } as never }),
    method: 'POST', uri: '/__sandbox/transactions', body: { cardId: 'CK1', amount: 12.5, currency: 'EUR', type: 'clearing', merchant: { name: 'Cafe', mcc: '5814', country: 'DE' } },
    status: 201, reply: { id: 't1', cardId: 'CK1', accountId: '48213377', amount: 12.5, currency: 'EUR', type: 'PURCHASE', status: 'SETTLED', merchant: { name: 'Cafe', mcc: '5814', city: 'Online', country: 'DE' }, createdAt: '2026-03-01T10:15:00.000Z' },
  },
  {
    name: 'processing.simulateAuthorization (only the control route\'s fields travel)', upstream: 'processing',
    call: (c, ctx) => c.processing.simulateAuthorization(ctx, { cardId: 'CK1', amount: 9.5, type: 'WITHDRAWAL', authorizationId: 'auth_1', notify: 'drop', merchant: { mcc: '6011', extra: 'x' } as never }, 'op-1'),
    method: 'POST', uri: '/__sandbox/authorizations', body: { cardId: 'CK1', amount: 9.5, type: 'WITHDRAWAL', authorizationId: 'auth_1', merchant: { mcc: '6011' } },
    status: 201, reply: { id: 't2', cardId: 'CK1' },
  },
  {
    name: 'processing.simulateStep', upstream: 'processing',
    call: (c, ctx) => c.processing.simulateStep(ctx, 't2', 'reversal', { amount: 2 }, 'op-2'),
    method: 'POST', uri: '/__sandbox/transactions/t2/reversal', body: { amount: 2 },
    reply: { id: 't2', cardId: 'CK1' },
  },
];

describe('unit: upstreams/clients (every contract endpoint)', () => {
  const mock = useMockAgent();
  let clients: UpstreamClients;
  beforeEach(() => {
    clients = createUpstreamClients(MOCK_URLS, { timeoutMs: 2000, log: captureLogger().log, dispatcher: mock.agent });
  });
  afterEach(() => clients.close());

  for (const c of cases) {
    it(`${c.name}: ${c.method} ${c.uri}`, async () => {
      let seenBody: string | undefined;
      let seenPath: string | undefined;
      const seenHeaders: Record<string, unknown> = {};
      // The mock agent matches a query re-encoded and sorted: the exact target is read from what was sent.
      mock.agent
        .get(MOCK_URLS[c.upstream])
        .intercept({ method: c.method, path: (uri) => uri.split('?')[0] === c.uri.split('?')[0] })
        .reply((options) => {
          seenPath = options.path;
          seenBody = options.body === null || options.body === undefined ? undefined : String(options.body);
          const raw = options.headers as unknown as string[];
          for (let i = 0; i < raw.length; i += 2) seenHeaders[raw[i]!.toLowerCase()] = raw[i + 1];
          return { statusCode: c.status ?? 200, data: c.reply as object };
        });
      const ctx: CallContext = { requestId: `req-${c.name}`, timing: {} };
      const result = await c.call(clients, ctx);
      expect(seenPath).to.equal(c.uri);
      expect(result).to.deep.equal('expected' in c ? c.expected : c.reply);
      expect(seenHeaders['x-request-id']).to.equal(ctx.requestId);
      if (c.body === undefined) {
        expect(seenBody ?? '').to.equal('');
        expect(seenHeaders['content-type']).to.equal(undefined);
      } else {
        expect(JSON.parse(seenBody ?? '')).to.deep.equal(c.body);
        expect(seenHeaders['content-type']).to.equal('application/json');
      }
      expect(ctx.timing?.upstreamLatencyMs).to.be.a('number').and.at.least(0);
    });
  }

  it('covers every endpoint of docs/upstreams.md sections 4 to 6 (and the control routes the simulate routes call): a client method, or a call of the upstream-proxy policy', () => {
    const methods = new Set(cases.map((c) => c.name.replace(/ \(.*\)$/, '')));
    expect([...methods].sort()).to.deep.equal(
      [
        'accounts.createAccount', 'accounts.findByOnboardingId',
        'issuer.createCard', 'issuer.getCard', 'issuer.getStatus', 'issuer.changeStatus', 'issuer.setEmbossName', 'issuer.replace', 'issuer.reissue',
        'issuer.setThreeDsAnswer', 'issuer.resetPinTries', 'issuer.changePin', 'issuer.forcePinLock', 'issuer.authorize', 'issuer.patchLimits', 'issuer.setLimit',
        'processing.listTransactions', 'processing.getTransaction', 'processing.transactionChanges', 'processing.statusUpdate', 'processing.cardCreated',
        'issuer.simulateStatus', 'processing.simulateTransaction', 'processing.simulateAuthorization', 'processing.simulateStep',
        'proxied issuer GET /cards/{cardKey}/cvv', 'proxied issuer GET /cards/{cardKey}/pan', 'proxied issuer GET /pin-encryption-key',
        'proxied issuer GET /cards/{cardKey}/limits', 'proxied issuer GET /cards/{cardKey}/limits/{name}', 'proxied issuer GET /cards/{cardKey}/limits/{name}/available',
        'proxied processing POST /fees', 'proxied processing GET /delivery-methods',
      ].sort(),
    );
    // Section 10's token methods have their own file (processing-client-tokens.test.ts), which checks each has a case.
    const tokenMethods = new Set(['provisionApplePay', 'provisionGooglePay', 'getToken', 'cardTokens', 'tokenChanges', 'tokenOperation', 'moveTokens', 'simulateTokenization', 'simulateVerification', 'simulateNetworkStatus'].map((m) => `processing.${m}`));
    for (const upstream of ['issuer', 'processing', 'accounts'] as const) {
      const implemented = Object.keys(clients[upstream]).map((m) => `${upstream}.${m}`).filter((m) => !tokenMethods.has(m));
      for (const m of implemented) expect(methods, m).to.include(m);
    }
  });

  it('an empty card key is refused before any request (rejected promise, not a throw)', async () => {
    const pending = clients.issuer.getCard({ requestId: 'r' }, '');
    let error: unknown;
    await pending.catch((err: unknown) => {
      error = err;
    });
    expect(error).to.be.instanceOf(TypeError);
  });

  it('findByOnboardingId: an answer without a data array is an upstream_error, not "no account"', async () => {
    mock.agent.get(MOCK_URLS.accounts).intercept({ method: 'GET', path: '/accounts', query: { onboardingId: 'o1' } }).reply(200, { accounts: [] });
    let error: unknown;
    await clients.accounts.findByOnboardingId({ requestId: 'r' }, 'o1').catch((err: unknown) => {
      error = err;
    });
    expect(error).to.include({ status: 502, code: 'upstream_error' });
  });

  it('all three clients forward the request id and sum their latency into one timing sink', async () => {
    const flow = { 'x-request-id': 'flow-1' };
    mock.agent.get(MOCK_URLS.accounts).intercept({ method: 'GET', path: '/accounts', query: { onboardingId: 'o1' }, headers: flow }).reply(200, { data: [ACCOUNT] }).delay(15);
    mock.agent.get(MOCK_URLS.issuer).intercept({ method: 'GET', path: '/cards/CK1', headers: flow }).reply(200, CARD).delay(15);
    mock.agent
      .get(MOCK_URLS.processing)
      .intercept({ method: 'GET', path: '/transactions', query: { cardId: 'CK1', page: 1, limit: 20 }, headers: flow })
      .reply(200, { data: [], total: 0, page: 1, limit: 20 })
      .delay(15);
    const ctx: CallContext = { requestId: 'flow-1', timing: { upstreamLatencyMs: 5 } };
    await clients.accounts.findByOnboardingId(ctx, 'o1');
    await clients.issuer.getCard(ctx, 'CK1');
    await clients.processing.listTransactions(ctx, { cardId: 'CK1', page: 1, limit: 20 });
    expect(ctx.timing?.upstreamLatencyMs).to.be.at.least(5 + 3 * 12);
  });
});
