import { expect } from 'chai';
import { createUpstreamClients, type CallContext, type UpstreamClients } from '../../../../gateway/upstreams';
import { captureLogger, MOCK_URLS, useMockAgent } from './helpers';

/** One client method of docs/upstreams.md section 10, against a mock processor. */
interface TokenCase {
  name: string;
  call: (clients: UpstreamClients, ctx: CallContext) => Promise<unknown>;
  method: 'GET' | 'POST';
  /** Exact path and query as sent (encoded). */
  uri: string;
  /** Exact JSON body expected; undefined = no body at all. */
  body?: unknown;
  /** The `Idempotency-Key` expected; undefined = none sent. */
  idempotencyKey?: string;
  status?: number;
  reply: unknown;
  /** What the method resolves to, when it is not `reply`. */
  expected?: unknown;
}

const TOKEN = {
  tokenReference: 'tref_6b0237a240487492a2ee0de3', cardKey: 'CK1', tokenizationId: 'tkz_1', walletProvider: 'apple_pay', tokenRequestorId: '50110030273',
  last4: '4821', tokenExpDate: '11/2029', device: { type: 'phone', name: "Ada's iPhone", ipCountry: 'GB' }, status: 'active', version: 2,
  createdAt: '2026-12-08T10:00:00.000Z', updatedAt: '2026-12-08T10:00:01.000Z',
};
const CERTIFICATE = 'A'.repeat(120);
/** A Luhn-valid 16-digit run: refused anywhere the walker reads. */
const PAN = '5355709999999994';
/** Opaque base64 holding a Luhn-valid run of digits by chance: the walker must not read it. */
const OPAQUE_WITH_DIGITS = `QUJD${PAN}RUZH`;

const TOKEN_CASES: TokenCase[] = [
  {
    name: 'processing.provisionApplePay (only the contract\'s fields travel)',
    call: (c, ctx) => c.processing.provisionApplePay(ctx, { cardKey: 'CK1', certificates: [CERTIFICATE], nonce: 'bm9uY2U=', nonceSignature: 'c2lnbmF0dXJlc2lnbmF0dXJl', extra: 'x' } as never),
    method: 'POST', uri: '/tokens/provisioning/apple-pay',
    body: { cardKey: 'CK1', certificates: [CERTIFICATE], nonce: 'bm9uY2U=', nonceSignature: 'c2lnbmF0dXJlc2lnbmF0dXJl' },
    reply: { activationData: OPAQUE_WITH_DIGITS, encryptedPassData: OPAQUE_WITH_DIGITS, ephemeralPublicKey: OPAQUE_WITH_DIGITS },
  },
  {
    name: 'processing.provisionGooglePay',
    call: (c, ctx) => c.processing.provisionGooglePay(ctx, { cardKey: 'CK1', walletAccountId: 'wallet-1', deviceId: 'device-1' }),
    method: 'POST', uri: '/tokens/provisioning/google-pay', body: { cardKey: 'CK1', walletAccountId: 'wallet-1', deviceId: 'device-1' },
    reply: { opaquePaymentCard: OPAQUE_WITH_DIGITS, network: 'MASTERCARD', tokenServiceProvider: 'TOKEN_PROVIDER_MASTERCARD', displayName: 'Partner Card', lastDigits: '1234' },
  },
  { name: 'processing.getToken', call: (c, ctx) => c.processing.getToken(ctx, 'tref_1/..'), method: 'GET', uri: '/tokens/tref_1%2F..', reply: TOKEN },
  { name: 'processing.cardTokens', call: (c, ctx) => c.processing.cardTokens(ctx, 'CK 1'), method: 'GET', uri: '/tokens?cardKey=CK+1', reply: { data: [TOKEN] }, expected: [TOKEN] },
  { name: 'processing.tokenChanges', call: (c, ctx) => c.processing.tokenChanges(ctx, 'b0.12', 100), method: 'GET', uri: '/tokens/changes?after=b0.12&limit=100', reply: { data: [TOKEN], nextCursor: 'b0.13' } },
  { name: 'processing.tokenChanges (from the start)', call: (c, ctx) => c.processing.tokenChanges(ctx, undefined, 5), method: 'GET', uri: '/tokens/changes?limit=5', reply: { data: [], nextCursor: 'b0.0' } },
  {
    name: 'processing.tokenOperation',
    call: (c, ctx) => c.processing.tokenOperation(ctx, 'tref_1', 'suspend', { reason: 'card LOCKED', requestedBy: 'card_state' }, 'op-suspend-1'),
    method: 'POST', uri: '/tokens/tref_1/suspend', body: { reason: 'card LOCKED', requestedBy: 'card_state' }, idempotencyKey: 'op-suspend-1', reply: { ...TOKEN, status: 'suspended', version: 3 },
  },
  {
    name: 'processing.tokenOperation (no reason)',
    call: (c, ctx) => c.processing.tokenOperation(ctx, 'tref_1', 'deactivate', { requestedBy: 'partner' }, 'op-2'),
    method: 'POST', uri: '/tokens/tref_1/deactivate', body: { requestedBy: 'partner' }, idempotencyKey: 'op-2', reply: { ...TOKEN, status: 'deactivated', version: 3 },
  },
  {
    name: 'processing.moveTokens',
    call: (c, ctx) => c.processing.moveTokens(ctx, 'CK1', { toCardKey: 'CK2', reason: 'replaced' }, 'op-move-1'),
    method: 'POST', uri: '/cards/CK1/tokens/move', body: { toCardKey: 'CK2', reason: 'replaced' }, idempotencyKey: 'op-move-1', reply: { moved: [{ ...TOKEN, cardKey: 'CK2', version: 3 }] },
  },
  {
    name: 'processing.simulateTokenization (only the control route\'s fields travel)',
    call: (c, ctx) => c.processing.simulateTokenization(ctx, { cardId: 'CK1', walletProvider: 'google_pay', device: { type: 'watch', extra: 'x' } as never, networkVerdict: 'require_verification', tokenizationId: 'tkz_9', notify: 'drop' }, 'op-3'),
    method: 'POST', uri: '/__sandbox/tokenizations', body: { cardId: 'CK1', walletProvider: 'google_pay', device: { type: 'watch' }, networkVerdict: 'require_verification', tokenizationId: 'tkz_9' }, idempotencyKey: 'op-3',
    status: 201, reply: { token: { ...TOKEN, status: 'pending_verification' }, decision: { decision: 'require_verification' } },
  },
  {
    name: 'processing.simulateVerification',
    call: (c, ctx) => c.processing.simulateVerification(ctx, 'tref_1', { code: '482913' }),
    method: 'POST', uri: '/__sandbox/tokens/tref_1/verify', body: { code: '482913' }, reply: { verified: true, token: TOKEN },
  },
  {
    name: 'processing.simulateNetworkStatus',
    call: (c, ctx) => c.processing.simulateNetworkStatus(ctx, 'tref_1', { status: 'suspended', reason: 'device_lost', notify: 'drop' }, 'op-4'),
    method: 'POST', uri: '/__sandbox/tokens/tref_1/network-status', body: { status: 'suspended', reason: 'device_lost', notify: 'drop' }, idempotencyKey: 'op-4', reply: { ...TOKEN, status: 'suspended', version: 3 },
  },
];

/**
 * The processing client's token methods (docs/upstreams.md section 10) against a mock processor:
 * the exact request of each (path, query, body, operation id), what it resolves to, and the card-data
 * walker over the provisioning answers (their opaque members skipped, every other member read).
 */
describe('unit: upstreams/processing-client (network tokens, section 10)', () => {
  const mock = useMockAgent();
  let clients: UpstreamClients;
  beforeEach(() => {
    clients = createUpstreamClients(MOCK_URLS, { timeoutMs: 2000, log: captureLogger().log, dispatcher: mock.agent });
  });
  afterEach(() => clients.close());

  /** Intercepts one request to the processor, answering `status` `reply`; what was sent is read back from `seen`. */
  const intercept = (method: string, path: string, status: number, reply: unknown) => {
    const seen: { path?: string; body?: string; headers: Record<string, unknown> } = { headers: {} };
    mock.agent
      .get(MOCK_URLS.processing)
      .intercept({ method, path: (uri) => uri.split('?')[0] === path.split('?')[0] })
      .reply((options) => {
        seen.path = options.path;
        seen.body = options.body === null || options.body === undefined ? undefined : String(options.body);
        const raw = options.headers as unknown as string[];
        for (let i = 0; i < raw.length; i += 2) seen.headers[raw[i]!.toLowerCase()] = raw[i + 1];
        return { statusCode: status, data: reply as object };
      });
    return seen;
  };

  for (const c of TOKEN_CASES) {
    it(`${c.name}: ${c.method} ${c.uri}`, async () => {
      const seen = intercept(c.method, c.uri, c.status ?? 200, c.reply);
      const ctx: CallContext = { requestId: `req-${c.name}`, timing: {} };
      const result = await c.call(clients, ctx);
      expect(seen.path).to.equal(c.uri);
      expect(result).to.deep.equal('expected' in c ? c.expected : c.reply);
      expect(seen.headers['x-request-id']).to.equal(ctx.requestId);
      expect(seen.headers['idempotency-key']).to.equal(c.idempotencyKey);
      if (c.body === undefined) expect(seen.body ?? '').to.equal('');
      else expect(JSON.parse(seen.body ?? '')).to.deep.equal(c.body);
    });
  }

  it('has a case for every token method it declares', () => {
    const named = new Set(TOKEN_CASES.map((c) => c.name.replace(/ \(.*\)$/, '')));
    for (const m of ['provisionApplePay', 'provisionGooglePay', 'getToken', 'cardTokens', 'tokenChanges', 'tokenOperation', 'moveTokens', 'simulateTokenization', 'simulateVerification', 'simulateNetworkStatus']) {
      expect(clients.processing, m).to.have.property(m).that.is.a('function');
      expect(named, m).to.include(`processing.${m}`);
    }
  });

  describe('the card-data walker over the provisioning answers', () => {
    const refusedAs502 = async (pending: Promise<unknown>): Promise<void> => {
      let error: unknown;
      await pending.catch((err: unknown) => {
        error = err;
      });
      expect(error, 'the answer must be refused').to.include({ status: 502, code: 'upstream_error' });
      // The failure names the member, never the value.
      expect(String((error as Error).message)).to.not.include(PAN);
    };

    it('Google Pay: a card number in lastDigits, displayName or network is refused (only opaquePaymentCard is skipped)', async () => {
      for (const member of ['lastDigits', 'displayName', 'network']) {
        intercept('POST', '/tokens/provisioning/google-pay', 200, { opaquePaymentCard: 'b3BhcXVl', network: 'MASTERCARD', tokenServiceProvider: 'TOKEN_PROVIDER_MASTERCARD', displayName: 'Partner Card', lastDigits: '1234', [member]: PAN });
        await refusedAs502(clients.processing.provisionGooglePay({ requestId: `r-${member}` }, { cardKey: 'CK1', walletAccountId: 'w', deviceId: 'd' }));
      }
    });

    it('Apple Pay: a card number in a member the contract does not name is refused (only the three opaque members are skipped)', async () => {
      intercept('POST', '/tokens/provisioning/apple-pay', 200, { activationData: 'YQ==', encryptedPassData: 'Yg==', ephemeralPublicKey: 'Yw==', cardNumberHint: PAN });
      await refusedAs502(clients.processing.provisionApplePay({ requestId: 'r' }, { cardKey: 'CK1', certificates: [CERTIFICATE], nonce: 'bm9uY2U=', nonceSignature: 'c2lnbmF0dXJlc2lnbmF0dXJl' }));
    });

    it('a token read is walked whole: a card number in a token (its device name) is refused', async () => {
      intercept('GET', '/tokens/tref_1', 200, { ...TOKEN, device: { type: 'phone', name: PAN } });
      await refusedAs502(clients.processing.getToken({ requestId: 'r' }, 'tref_1'));
    });
  });

  it('a processor refusal keeps its code: 409 TOKEN_TRANSITION_INVALID is a 409 conflict naming it, 404 TOKEN_NOT_FOUND a 404', async () => {
    intercept('POST', '/tokens/tref_1/resume', 409, { errorCode: 'TOKEN_TRANSITION_INVALID', message: 'deactivated' });
    let error: unknown;
    await clients.processing.tokenOperation({ requestId: 'r' }, 'tref_1', 'resume', { requestedBy: 'partner' }, 'op-9').catch((err: unknown) => {
      error = err;
    });
    expect(error).to.include({ status: 409, code: 'conflict' });
    expect((error as { extensions?: Record<string, unknown> }).extensions).to.include({ upstreamCode: 'TOKEN_TRANSITION_INVALID' });
    intercept('GET', '/tokens/tref_2', 404, { errorCode: 'TOKEN_NOT_FOUND', message: 'no token' });
    error = undefined;
    await clients.processing.getToken({ requestId: 'r' }, 'tref_2').catch((err: unknown) => {
      error = err;
    });
    expect(error).to.include({ status: 404, code: 'not_found' });
  });
});
