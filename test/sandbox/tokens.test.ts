import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { SandboxToken, SimulatedTokenizationResult, SimulatedVerificationResult, Token, Transaction } from '../../contracts/upstreams';
import { createProcessingSandbox, Notifier } from '../../sandbox';
import { ProcessingState } from '../../sandbox/processing/routes';
import { tokenizationDeadlineMs } from '../../sandbox/processing/token-routes';
import { call, type Answer, type ErrorBody } from './http-client';
import { TokenReceiver } from './token-receiver';

const CARD = 'CK-TK-1';
const OTHER_CARD = 'CK-TK-2';
const NEW_CARD = 'CK-TK-3';
/** A DER-looking certificate in standard base64, 100+ characters. */
const CERTIFICATE = crypto.randomBytes(300).toString('base64');
const APPLE_BODY = { cardKey: CARD, certificates: [CERTIFICATE, CERTIFICATE], nonce: crypto.randomBytes(16).toString('base64'), nonceSignature: crypto.randomBytes(64).toString('base64') };
const GOOGLE_BODY = { cardKey: CARD, walletAccountId: 'wallet-account-1', deviceId: 'device-1' };

/** Bytes of a base64 or base64url string (Buffer decodes both). */
const bytesOf = (text: string): Buffer => Buffer.from(text, 'base64');

/**
 * The processing sandbox as the cards' token service (docs/upstreams.md section 10), over real HTTP:
 * a processing sandbox of its own whose notifier points at a stand-in for the gateway's listener
 * that answers tokenization and verification requests as the gateway would.
 */
describe('processing sandbox: network tokens and wallets (provisioning, tokenizations, verification, operations, move, network changes)', function () {
  let server: http.Server;
  let url: string;
  let receiver: TokenReceiver;
  const notifier = new Notifier('processing', { log: () => undefined });
  const secret = crypto.randomBytes(32).toString('base64url');
  const deadlineBefore = process.env.TOKENIZATION_DEADLINE_MS;

  const post = <T = Record<string, unknown>>(path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer<T>> => call<T>(`${url}${path}`, { method: 'POST', body, headers });
  const refused = async (path: string, body: unknown, status: number, errorCode: string, headers?: Record<string, string>): Promise<ErrorBody> => {
    const answer = await post<ErrorBody>(path, body, headers);
    expect(answer.status, `${path} ${JSON.stringify(body)} ${answer.text}`).to.equal(status);
    expect(answer.body.errorCode, `${path} ${JSON.stringify(body)}`).to.equal(errorCode);
    return answer.body;
  };
  const tokenize = async (body: Record<string, unknown> = {}, headers?: Record<string, string>): Promise<SimulatedTokenizationResult> => {
    const answer = await post<SimulatedTokenizationResult>('/__sandbox/tokenizations', { cardId: CARD, walletProvider: 'apple_pay', ...body }, headers);
    expect(answer.status, answer.text).to.equal(201);
    return answer.body;
  };
  const activeToken = async (body: Record<string, unknown> = {}): Promise<Token> => (await tokenize(body)).token;
  const read = async (ref: string): Promise<Token> => {
    const answer = await call<Token>(`${url}/tokens/${ref}`);
    expect(answer.status, answer.text).to.equal(200);
    return answer.body;
  };
  const operate = async (ref: string, operation: string, body: unknown = { requestedBy: 'partner' }, headers?: Record<string, string>): Promise<Answer<Token>> => post<Token>(`/tokens/${ref}/${operation}`, body, headers);
  const sandboxTokens = async (cardKey?: string): Promise<SandboxToken[]> => (await call<SandboxToken[]>(`${url}/__sandbox/tokens${cardKey ? `?cardKey=${cardKey}` : ''}`)).body;
  const requestLog = async (): Promise<string> => (await call(`${url}/__sandbox/requests`)).text;

  before(async () => {
    receiver = new TokenReceiver(secret);
    const receiverUrl = await receiver.up();
    // The deadline the sandbox waits for the gateway's decision: its least, so that the stand-in tests take a second.
    process.env.TOKENIZATION_DEADLINE_MS = '1000';
    try {
      server = http.createServer(createProcessingSandbox({ notifier }));
    } finally {
      if (deadlineBefore === undefined) delete process.env.TOKENIZATION_DEADLINE_MS;
      else process.env.TOKENIZATION_DEADLINE_MS = deadlineBefore;
    }
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    notifier.setTarget({ url: receiverUrl, secret });
  });
  after(async () => {
    notifier.clear();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await receiver?.close();
  });
  beforeEach(async () => {
    await post('/__sandbox/reset');
    receiver.reset();
    await post('/__sandbox/cards', { cardKey: CARD, accountId: 'acc-tk', cardMask: '5355 70** **** 4242' });
    await post('/__sandbox/cards', { cardKey: OTHER_CARD, accountId: 'acc-tk' });
    await post('/__sandbox/cards', { cardKey: NEW_CARD, accountId: 'acc-tk' });
  });

  describe('push provisioning (10.2)', () => {
    it('Apple Pay: 200 random payloads of the contract\'s sizes and encodings (activationData 64 bytes, encryptedPassData 1,024 to 2,048, ephemeralPublicKey an uncompressed P-256 point), another each call', async () => {
      const first = await post<Record<string, string>>('/tokens/provisioning/apple-pay', APPLE_BODY);
      expect(first.status, first.text).to.equal(200);
      expect(Object.keys(first.body).sort()).to.deep.equal(['activationData', 'encryptedPassData', 'ephemeralPublicKey']);
      for (const value of Object.values(first.body)) expect(value).to.match(/^[A-Za-z0-9+/]+={0,2}$/);
      expect(bytesOf(first.body.activationData)).to.have.length(64);
      expect(bytesOf(first.body.encryptedPassData).length).to.be.within(1024, 2048);
      const key = bytesOf(first.body.ephemeralPublicKey);
      expect(key).to.have.length(65);
      expect(key[0]).to.equal(0x04);
      const second = await post<Record<string, string>>('/tokens/provisioning/apple-pay', APPLE_BODY);
      expect(second.body.activationData, 'a new payload each call').to.not.equal(first.body.activationData);
      // The request log holds the gateway's requests, never an answer.
      const log = await requestLog();
      expect(log).to.include(APPLE_BODY.nonce);
      for (const value of [...Object.values(first.body), ...Object.values(second.body)]) expect(log).to.not.include(value);
    });

    it('Google Pay: 200 an opaquePaymentCard (base64url of 1,024 to 2,048 bytes), the network, and the card\'s last four digits', async () => {
      const answer = await post<Record<string, string>>('/tokens/provisioning/google-pay', GOOGLE_BODY);
      expect(answer.status, answer.text).to.equal(200);
      const { opaquePaymentCard, ...rest } = answer.body;
      expect(rest).to.deep.equal({ network: 'MASTERCARD', tokenServiceProvider: 'TOKEN_PROVIDER_MASTERCARD', displayName: 'Partner Card', lastDigits: '4242' });
      expect(opaquePaymentCard).to.match(/^[A-Za-z0-9_-]+$/);
      expect(bytesOf(opaquePaymentCard).length).to.be.within(1024, 2048);
      expect(await requestLog()).to.not.include(opaquePaymentCard);
      // A card registered without a mask: four digits drawn from its key, the same each time.
      const other = await post<Record<string, string>>('/tokens/provisioning/google-pay', { ...GOOGLE_BODY, cardKey: OTHER_CARD });
      expect(other.body.lastDigits).to.match(/^[0-9]{4}$/);
      expect((await post<Record<string, string>>('/tokens/provisioning/google-pay', { ...GOOGLE_BODY, cardKey: OTHER_CARD })).body.lastDigits).to.equal(other.body.lastDigits);
    });

    it('every malformed body is 400 VALIDATION_ERROR naming the field', async () => {
      const apple: Array<[string, unknown]> = [
        ['/', undefined],
        ['/', [APPLE_BODY]],
        ['/cardKey', { ...APPLE_BODY, cardKey: undefined }],
        ['/cardKey', { ...APPLE_BODY, cardKey: 'K'.repeat(65) }],
        ['/certificates', { ...APPLE_BODY, certificates: [] }],
        ['/certificates', { ...APPLE_BODY, certificates: [CERTIFICATE, CERTIFICATE, CERTIFICATE, CERTIFICATE] }],
        ['/certificates', { ...APPLE_BODY, certificates: CERTIFICATE }],
        ['/certificates/0', { ...APPLE_BODY, certificates: ['QUJD'] }],
        ['/certificates/0', { ...APPLE_BODY, certificates: ['A'.repeat(4100)] }],
        ['/certificates/1', { ...APPLE_BODY, certificates: [CERTIFICATE, `${CERTIFICATE.slice(0, 200)}-_-_`] }],
        ['/certificates/0', { ...APPLE_BODY, certificates: [42] }],
        ['/nonce', { ...APPLE_BODY, nonce: 'AAA=' }],
        ['/nonce', { ...APPLE_BODY, nonce: crypto.randomBytes(65).toString('base64') }],
        ['/nonce', { ...APPLE_BODY, nonce: 'not base64!' }],
        ['/nonceSignature', { ...APPLE_BODY, nonceSignature: crypto.randomBytes(15).toString('base64') }],
        ['/nonceSignature', { ...APPLE_BODY, nonceSignature: crypto.randomBytes(513).toString('base64') }],
        ['/nonceSignature', { ...APPLE_BODY, nonceSignature: crypto.randomBytes(32).toString('base64url').replace(/=+$/, '') + '_' }],
        ['/deviceId', { ...APPLE_BODY, deviceId: 'x' }],
      ];
      for (const [path, body] of apple) {
        const error = await refused('/tokens/provisioning/apple-pay', body, 400, 'VALIDATION_ERROR');
        expect(error.details?.map((d) => d.path), JSON.stringify(body)?.slice(0, 80)).to.include(path);
      }
      const google: Array<[string, unknown]> = [
        ['/walletAccountId', { ...GOOGLE_BODY, walletAccountId: '' }],
        ['/walletAccountId', { ...GOOGLE_BODY, walletAccountId: 'w'.repeat(65) }],
        ['/walletAccountId', { ...GOOGLE_BODY, walletAccountId: 'has space' }],
        ['/deviceId', { ...GOOGLE_BODY, deviceId: 'é' }],
        ['/deviceId', { ...GOOGLE_BODY, deviceId: 7 }],
        ['/nonce', { ...GOOGLE_BODY, nonce: 'AAAA' }],
      ];
      for (const [path, body] of google) {
        const error = await refused('/tokens/provisioning/google-pay', body, 400, 'VALIDATION_ERROR');
        expect(error.details?.map((d) => d.path), JSON.stringify(body)).to.include(path);
      }
    });

    it('errors in 10.2\'s order: an unknown card 404 CARD_NOT_FOUND (even with a bad body), then 400, then 409 CARD_NOT_TOKENIZABLE for a card closed at the network (last status update S4)', async () => {
      await refused('/tokens/provisioning/apple-pay', { ...APPLE_BODY, cardKey: 'CK-UNKNOWN' }, 404, 'CARD_NOT_FOUND');
      await refused('/tokens/provisioning/google-pay', { cardKey: 'CK-UNKNOWN', deviceId: '' }, 404, 'CARD_NOT_FOUND');
      await post('/cards/status-update', { cardKey: CARD, statusCode: 'L1' });
      expect((await post('/tokens/provisioning/apple-pay', APPLE_BODY)).status, 'a lock is the gateway\'s to refuse, not the processor\'s').to.equal(200);
      await post('/cards/status-update', { cardKey: CARD, statusCode: 'S4' });
      await refused('/tokens/provisioning/apple-pay', { ...APPLE_BODY, nonce: 'A' }, 400, 'VALIDATION_ERROR');
      await refused('/tokens/provisioning/apple-pay', APPLE_BODY, 409, 'CARD_NOT_TOKENIZABLE');
      await refused('/tokens/provisioning/google-pay', GOOGLE_BODY, 409, 'CARD_NOT_TOKENIZABLE');
      // Another card's status update does not refuse this one.
      expect((await post('/tokens/provisioning/google-pay', { ...GOOGLE_BODY, cardKey: OTHER_CARD })).status).to.equal(200);
    });
  });

  describe('the tokenization request (10.3) through POST /__sandbox/tokenizations (10.9)', () => {
    it('asks the gateway, signed, with the reserved reference, the card, wallet, requestor, token facts, device and the network\'s verdict; approve makes an active token, notified token.created before the answer', async () => {
      const { token, decision } = await tokenize({ riskScore: 2 });
      expect(decision).to.deep.equal({ decision: 'approve' });
      expect(receiver.tokenizations).to.have.length(1);
      const [asked] = receiver.tokenizations;
      expect(asked.signed).to.equal(true);
      const request = asked.body as unknown as { id: string; type: string; occurredAt: string; tokenization: Record<string, unknown> };
      expect(asked.id).to.equal(request.id);
      expect(request.type).to.equal('tokenization.request');
      expect(request.id).to.match(/^tkz_[0-9a-f]{24}$/);
      const now = new Date();
      expect(request.tokenization).to.deep.equal({
        id: request.id, tokenReference: token.tokenReference, cardId: CARD, walletProvider: 'apple_pay', tokenRequestorId: '50110030273',
        last4: token.last4, tokenExpDate: `${String(now.getUTCMonth() + 1).padStart(2, '0')}/${now.getUTCFullYear() + 3}`,
        device: { type: 'phone', name: 'Sandbox device', ipCountry: 'DE' }, networkVerdict: { decision: 'approve', riskScore: 2, reasons: [] }, at: request.occurredAt,
      });
      expect(token).to.deep.equal({
        tokenReference: token.tokenReference, cardKey: CARD, tokenizationId: request.id, walletProvider: 'apple_pay', tokenRequestorId: '50110030273',
        last4: token.last4, tokenExpDate: request.tokenization.tokenExpDate, device: { type: 'phone', name: 'Sandbox device', ipCountry: 'DE' },
        status: 'active', version: 1, createdAt: token.createdAt, updatedAt: token.createdAt,
      });
      expect(token.tokenReference).to.match(/^tref_[0-9a-f]{24}$/);
      expect(token.last4).to.match(/^[0-9]{4}$/);
      const notified = receiver.notificationsOf(token.tokenReference);
      expect(notified, 'delivered before the answer').to.have.length(1);
      expect(notified[0]).to.deep.include({ path: '/upstream-notifications/processing', signed: true, id: notified[0].body.id });
      expect(notified[0].body).to.deep.equal({ id: notified[0].body.id, type: 'token.created', occurredAt: token.createdAt, token });
      expect(notified[0].body.id).to.match(/^ntf_[0-9a-f]{24}$/);
      expect(await read(token.tokenReference)).to.deep.equal(token);
      expect((await call<{ data: Token[] }>(`${url}/tokens?cardKey=${CARD}`)).body).to.deep.equal({ data: [token] });
    });

    it('each wallet has its own requestor id; a merchant token\'s device is {type: other}; a device and requestor given are sent as given', async () => {
      const ids: Record<string, string> = { apple_pay: '50110030273', google_pay: '50120834693', samsung_pay: '50139059239', merchant: '50100000001' };
      for (const [walletProvider, id] of Object.entries(ids)) expect((await activeToken({ walletProvider })).tokenRequestorId, walletProvider).to.equal(id);
      expect((await activeToken({ walletProvider: 'merchant' })).device).to.deep.equal({ type: 'other' });
      const token = await activeToken({ walletProvider: 'google_pay', tokenRequestorId: '12345678901', device: { type: 'watch', name: "Ada's watch", ipCountry: 'GB' } });
      expect(token).to.deep.include({ tokenRequestorId: '12345678901', device: { type: 'watch', name: "Ada's watch", ipCountry: 'GB' } });
      expect(receiver.tokenizations.at(-1)!.body.tokenization).to.deep.include({ tokenRequestorId: '12345678901', device: { type: 'watch', name: "Ada's watch", ipCountry: 'GB' } });
    });

    it('the gateway\'s answers: require_verification → pending_verification; decline → declined with its code in the processor\'s history; the network\'s verdict is sent as asked', async () => {
      receiver.tokenizationAnswer = { body: { decision: 'require_verification' } };
      const pending = await tokenize({ networkVerdict: 'require_verification' });
      expect(pending.decision).to.deep.equal({ decision: 'require_verification' });
      expect(pending.token.status).to.equal('pending_verification');
      expect(receiver.tokenizations.at(-1)!.body.tokenization).to.deep.include({ networkVerdict: { decision: 'require_verification', reasons: [] } });
      receiver.tokenizationAnswer = { body: { decision: 'decline', declineReason: 'partner_declined' } };
      const declined = await tokenize();
      expect(declined.decision).to.deep.equal({ decision: 'decline', declineReason: 'partner_declined' });
      expect(declined.token.status).to.equal('declined');
      const [listed] = await sandboxTokens(CARD);
      expect(listed.tokenReference).to.equal(declined.token.tokenReference);
      expect(listed.history).to.deep.equal([{ status: 'declined', at: declined.token.createdAt, requestedBy: 'gateway', reason: 'partner_declined' }]);
      expect(receiver.notificationsOf(declined.token.tokenReference).map((n) => n.body.type)).to.deep.equal(['token.created']);
    });

    it('no usable answer in time (a hang past the deadline, a 5xx, a 401, a body of another shape) is the stand-in: declined stand_in; a 404 takes the network\'s verdict', async () => {
      receiver.tokenizationAnswer = 'hang';
      const started = Date.now();
      const hung = await tokenize();
      expect(Date.now() - started, 'answered once the 1,000 ms deadline passed').to.be.within(900, 5000);
      expect(hung.decision).to.deep.equal({ decision: 'stand_in' });
      expect(hung.token.status).to.equal('declined');
      expect((await sandboxTokens()).find((t) => t.tokenReference === hung.token.tokenReference)!.history[0]).to.deep.include({ requestedBy: 'stand_in', reason: 'stand_in' });
      for (const answer of [{ status: 500, body: {} }, { status: 503, body: { decision: 'approve' } }, { body: { approved: true } }, { body: { decision: 'decline' } }, { body: { decision: 'maybe' } }]) {
        receiver.tokenizationAnswer = answer;
        const result = await tokenize();
        expect(result.decision, JSON.stringify(answer)).to.deep.equal({ decision: 'stand_in' });
        expect(result.token.status).to.equal('declined');
      }
      receiver.tokenizationAnswer = { status: 404, body: { type: 'not_found' } };
      expect((await tokenize({ networkVerdict: 'approve' })).token.status).to.equal('active');
      expect((await tokenize({ networkVerdict: 'require_verification' })).token.status).to.equal('pending_verification');
      const networkDeclined = await tokenize({ networkVerdict: 'decline' });
      expect(networkDeclined.decision).to.deep.equal({ decision: 'decline', declineReason: 'network_declined' });
      // A wrong secret at the listener is a 401: the stand-in.
      receiver.tokenizationAnswer = { body: { decision: 'approve' } };
      notifier.setTarget({ url: (await call(`${url}/__sandbox/notify-target`)).body.url as string, secret: crypto.randomBytes(32).toString('base64url') });
      try {
        // notify drop: its token.created would be refused (401) and queued for retries too.
        expect((await tokenize({ notify: 'drop' })).decision).to.deep.equal({ decision: 'stand_in' });
      } finally {
        notifier.setTarget({ url: (await call(`${url}/__sandbox/notify-target`)).body.url as string, secret });
      }
    });

    it('the same tokenizationId on the same card is the processor\'s retry: the same token and decision, nothing asked or notified (concurrent repeats too); on another card 409 TOKENIZATION_ID_REUSED', async () => {
      const first = await tokenize({ tokenizationId: 'tkz-repeat-1' });
      const again = await tokenize({ tokenizationId: 'tkz-repeat-1', networkVerdict: 'decline' });
      expect(again).to.deep.equal(first);
      expect(receiver.tokenizations).to.have.length(1);
      expect(receiver.notificationsOf(first.token.tokenReference)).to.have.length(1);
      await refused('/__sandbox/tokenizations', { cardId: OTHER_CARD, walletProvider: 'apple_pay', tokenizationId: 'tkz-repeat-1' }, 409, 'TOKENIZATION_ID_REUSED');

      // Five at once while the gateway takes its time: one question, one token.
      receiver.tokenizationAnswer = 'hang';
      const answers = await Promise.all([1, 2, 3, 4, 5].map(() => tokenize({ tokenizationId: 'tkz-concurrent' })));
      expect(receiver.tokenizations.filter((t) => t.id === 'tkz-concurrent')).to.have.length(1);
      expect(new Set(answers.map((a) => a.token.tokenReference)).size).to.equal(1);
      expect((await sandboxTokens(CARD)).filter((t) => t.tokenizationId === 'tkz-concurrent')).to.have.length(1);
    });

    it('an unknown card 404 CARD_NOT_FOUND (nothing asked); every bad field 400 VALIDATION_ERROR naming it', async () => {
      await refused('/__sandbox/tokenizations', { cardId: 'CK-UNKNOWN', walletProvider: 'apple_pay' }, 404, 'CARD_NOT_FOUND');
      const bad: Array<[string, Record<string, unknown>]> = [
        ['/cardId', { cardId: undefined }],
        ['/walletProvider', { walletProvider: 'paypal' }],
        ['/walletProvider', { walletProvider: undefined }],
        ['/tokenRequestorId', { tokenRequestorId: '1234' }],
        ['/device', { device: 'phone' }],
        ['/device/type', { device: { type: 'car' } }],
        ['/device/name', { device: { type: 'phone', name: 'n'.repeat(65) } }],
        ['/device/ipCountry', { device: { type: 'phone', ipCountry: 'gb' } }],
        ['/device/os', { device: { type: 'phone', os: 'x' } }],
        ['/networkVerdict', { networkVerdict: 'maybe' }],
        ['/riskScore', { riskScore: 6 }],
        ['/tokenizationId', { tokenizationId: 't'.repeat(101) }],
        ['/tokenizationId', { tokenizationId: 'has space' }],
        ['/notify', { notify: 'later' }],
        ['/pan', { pan: '5355709999999994' }],
      ];
      for (const [path, fields] of bad) {
        const error = await refused('/__sandbox/tokenizations', { cardId: CARD, walletProvider: 'apple_pay', ...fields }, 400, 'VALIDATION_ERROR');
        expect(error.details?.map((d) => d.path), path).to.include(path);
      }
      expect(receiver.tokenizations).to.have.length(0);
    });

    it('notify drop: no token.created sent (the feed has the token); hold keeps it until released; resend sends the latest sent one again, same id and body', async () => {
      const dropped = await activeToken({ notify: 'drop' });
      expect(receiver.notificationsOf(dropped.tokenReference)).to.have.length(0);
      await refused(`/__sandbox/tokens/${dropped.tokenReference}/notifications/resend`, undefined, 409, 'NOTHING_TO_RESEND');
      expect((await call<{ data: Token[] }>(`${url}/tokens/changes`)).body.data.map((t) => t.tokenReference)).to.include(dropped.tokenReference);

      const held = await activeToken({ notify: 'hold' });
      expect(receiver.notificationsOf(held.tokenReference)).to.have.length(0);
      const released = await post<{ sent: number }>(`/__sandbox/tokens/${held.tokenReference}/notifications/release`);
      expect(released.body).to.deep.equal({ sent: 1 });
      const [created] = receiver.notificationsOf(held.tokenReference);
      expect(created.body).to.deep.include({ type: 'token.created', token: held });

      const resent = await post<{ sent: number }>(`/__sandbox/tokens/${held.tokenReference}/notifications/resend`);
      expect(resent.body).to.deep.equal({ sent: 1 });
      const both = receiver.notificationsOf(held.tokenReference);
      expect(both).to.have.length(2);
      expect(both[1].raw, 'same id and body').to.equal(both[0].raw);
    });
  });

  describe('verification (10.4) through POST /__sandbox/tokens/{ref}/verify', () => {
    const pendingToken = async (): Promise<Token> => {
      receiver.tokenizationAnswer = { body: { decision: 'require_verification' } };
      const { token } = await tokenize({ networkVerdict: 'require_verification' });
      expect(token.status).to.equal('pending_verification');
      return token;
    };
    const verify = async (ref: string, code: string): Promise<SimulatedVerificationResult> => {
      const answer = await post<SimulatedVerificationResult>(`/__sandbox/tokens/${ref}/verify`, { code });
      expect(answer.status, answer.text).to.equal(200);
      return answer.body;
    };

    it('asks the gateway, signed, with an attempt id, the reference and the code; verified → active, notified token.updated activated before the answer', async () => {
      const token = await pendingToken();
      const result = await verify(token.tokenReference, '482913');
      expect(receiver.verifications).to.have.length(1);
      const [asked] = receiver.verifications;
      expect(asked.signed).to.equal(true);
      const body = asked.body as unknown as { id: string; type: string; verification: Record<string, unknown> };
      expect(body.type).to.equal('tokenization.verification');
      expect(body.id).to.match(/^tvr_[0-9a-f]{24}$/);
      expect(asked.id).to.equal(body.id);
      expect(body.verification).to.deep.equal({ id: body.id, tokenReference: token.tokenReference, code: '482913' });
      expect(result.verified).to.equal(true);
      expect(result.token).to.deep.include({ status: 'active', version: 2 });
      const [, updated] = receiver.notificationsOf(token.tokenReference);
      expect(updated.body).to.deep.include({ type: 'token.updated', change: 'activated', token: result.token });
    });

    it('a wrong code with attempts left changes nothing; attemptsLeft 0 declines the token (notified); a stand-in answer changes nothing', async () => {
      const token = await pendingToken();
      receiver.verificationAnswer = { body: { verified: false, reason: 'wrong_code', attemptsLeft: 2 } };
      const wrong = await verify(token.tokenReference, '000000');
      expect(wrong).to.deep.include({ verified: false, reason: 'wrong_code', attemptsLeft: 2 });
      expect(wrong.token).to.deep.equal(token);
      receiver.verificationAnswer = { status: 500, body: {} };
      const standIn = await verify(token.tokenReference, '000001');
      expect(standIn).to.deep.include({ verified: false, reason: 'stand_in' });
      expect(standIn.token).to.deep.equal(token);
      receiver.verificationAnswer = { body: { verified: false, reason: 'attempts_exhausted', attemptsLeft: 0 } };
      const last = await verify(token.tokenReference, '000002');
      expect(last).to.deep.include({ verified: false, reason: 'attempts_exhausted', attemptsLeft: 0 });
      expect(last.token).to.deep.include({ status: 'declined', version: 2 });
      expect(receiver.notificationsOf(token.tokenReference).map((n) => n.body.change ?? n.body.type)).to.deep.equal(['token.created', 'declined']);
    });

    it('a token not pending_verification: 409 NOT_PENDING_VERIFICATION, nothing asked; an unknown one 404 TOKEN_NOT_FOUND; a bad code 400', async () => {
      const active = await activeToken();
      await refused(`/__sandbox/tokens/${active.tokenReference}/verify`, { code: '123456' }, 409, 'NOT_PENDING_VERIFICATION');
      await refused('/__sandbox/tokens/tref_000000000000000000000000/verify', { code: '123456' }, 404, 'TOKEN_NOT_FOUND');
      const pending = await pendingToken();
      for (const body of [{}, { code: '' }, { code: 'c'.repeat(65) }, { code: 123456 }, { code: '1', extra: 1 }]) {
        await refused(`/__sandbox/tokens/${pending.tokenReference}/verify`, body, 400, 'VALIDATION_ERROR');
      }
      expect(receiver.verifications).to.have.length(0);
    });
  });

  describe('token operations (10.6)', () => {
    it('suspend, resume, deactivate: each one version more, with its processor-side history and operation id, notified after the answer; the target status again is 200 unchanged (no change, no notification)', async () => {
      const token = await activeToken();
      const suspended = await operate(token.tokenReference, 'suspend', { reason: 'card LOCKED', requestedBy: 'card_state' }, { 'idempotency-key': 'op-1' });
      expect(suspended.status, suspended.text).to.equal(200);
      expect(suspended.body).to.deep.include({ status: 'suspended', version: 2 });
      await receiver.waitForNotifications((n) => n.body.type === 'token.updated' && (n.body.token as Token).version === 2);
      expect(receiver.notificationsOf(token.tokenReference).at(-1)!.body).to.deep.include({ type: 'token.updated', change: 'suspended', reason: 'operation', token: suspended.body });
      const again = await operate(token.tokenReference, 'suspend');
      expect(again.body).to.deep.equal(suspended.body);
      const resumed = await operate(token.tokenReference, 'resume', { requestedBy: 'partner' }, { 'idempotency-key': 'op-2' });
      expect(resumed.body).to.deep.include({ status: 'active', version: 3 });
      expect((await operate(token.tokenReference, 'resume')).body.version).to.equal(3);
      const deactivated = await operate(token.tokenReference, 'deactivate', { requestedBy: 'partner', reason: 'wallet removed' }, { 'idempotency-key': 'op-3' });
      expect(deactivated.body).to.deep.include({ status: 'deactivated', version: 4 });
      expect((await operate(token.tokenReference, 'deactivate')).body.version).to.equal(4);
      await receiver.waitForNotifications((n) => (n.body.token as Token | undefined)?.version === 4);
      const byVersion = receiver.notificationsOf(token.tokenReference).sort((a, b) => (a.body.token as Token).version - (b.body.token as Token).version);
      expect(byVersion.map((n) => n.body.change ?? n.body.type)).to.deep.equal(['token.created', 'suspended', 'resumed', 'deactivated']);
      const [listed] = await sandboxTokens(CARD);
      expect(listed.operationIds).to.deep.equal(['op-1', 'op-2', 'op-3']);
      expect(listed.history.map((h) => [h.status, h.requestedBy, h.reason])).to.deep.equal([
        ['active', 'gateway', undefined], ['suspended', 'card_state', 'card LOCKED'], ['active', 'partner', undefined], ['deactivated', 'partner', 'wallet removed'],
      ]);
      expect(await read(token.tokenReference)).to.deep.equal(deactivated.body);
    });

    it('the transitions the processor refuses: 409 TOKEN_TRANSITION_INVALID, nothing changed', async () => {
      receiver.tokenizationAnswer = { body: { decision: 'require_verification' } };
      const pending = (await tokenize()).token;
      receiver.tokenizationAnswer = { body: { decision: 'decline', declineReason: 'card_locked' } };
      const declined = (await tokenize()).token;
      receiver.tokenizationAnswer = { body: { decision: 'approve' } };
      const deactivated = await activeToken();
      await operate(deactivated.tokenReference, 'deactivate');
      const active = await activeToken();
      const table: Array<[Token, string]> = [
        [pending, 'suspend'], [pending, 'resume'], [declined, 'suspend'], [declined, 'resume'], [declined, 'deactivate'],
        [deactivated, 'suspend'], [deactivated, 'resume'],
      ];
      for (const [token, operation] of table) {
        const before = await read(token.tokenReference);
        await refused(`/tokens/${token.tokenReference}/${operation}`, { requestedBy: 'partner' }, 409, 'TOKEN_TRANSITION_INVALID');
        expect(await read(token.tokenReference), `${before.status} ${operation}`).to.deep.equal(before);
      }
      // A pending or requested token can be deactivated.
      expect((await operate(pending.tokenReference, 'deactivate')).body.status).to.equal('deactivated');
      expect((await operate(active.tokenReference, 'resume')).body).to.deep.equal(active);
    });

    it('errors in 10.6\'s order: 404 TOKEN_NOT_FOUND (even with a bad body), 400 VALIDATION_ERROR, the idempotency 409s, then the transition', async () => {
      await refused('/tokens/tref_000000000000000000000000/suspend', { bad: true }, 404, 'TOKEN_NOT_FOUND');
      const token = await activeToken();
      for (const body of [undefined, {}, { requestedBy: 'network' }, { requestedBy: 'partner', reason: '' }, { requestedBy: 'partner', reason: 'r'.repeat(201) }, { requestedBy: 'partner', extra: 1 }]) {
        await refused(`/tokens/${token.tokenReference}/suspend`, body, 400, 'VALIDATION_ERROR');
      }
      // An Idempotency-Key: the same request replays the first answer (no second change), another request with it is 409.
      const first = await operate(token.tokenReference, 'suspend', { requestedBy: 'partner' }, { 'idempotency-key': 'op-replay' });
      await operate(token.tokenReference, 'resume');
      const replay = await operate(token.tokenReference, 'suspend', { requestedBy: 'partner' }, { 'idempotency-key': 'op-replay' });
      expect(replay.headers.get('idempotent-replayed')).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      expect((await read(token.tokenReference)).status, 'the replay changed nothing').to.equal('active');
      await refused(`/tokens/${token.tokenReference}/suspend`, { requestedBy: 'card_state' }, 409, 'IDEMPOTENCY_KEY_REUSED', { 'idempotency-key': 'op-replay' });
      await operate(token.tokenReference, 'deactivate');
      // A replayed refusal is the first refusal.
      await refused(`/tokens/${token.tokenReference}/resume`, { requestedBy: 'partner' }, 409, 'TOKEN_TRANSITION_INVALID', { 'idempotency-key': 'op-refused' });
      await refused(`/tokens/${token.tokenReference}/resume`, { requestedBy: 'partner' }, 409, 'TOKEN_TRANSITION_INVALID', { 'idempotency-key': 'op-refused' });
    });

    it('move: every active and suspended token of the card goes to the new card (one version more, card_updated), the others stay; none is {moved: []}; an unknown card either side 404; the same card 400; a replay moves nothing more', async () => {
      const active = await activeToken();
      const suspended = await activeToken();
      await operate(suspended.tokenReference, 'suspend');
      receiver.tokenizationAnswer = { body: { decision: 'require_verification' } };
      const pending = (await tokenize()).token;
      receiver.tokenizationAnswer = { body: { decision: 'approve' } };
      const moved = await post<{ moved: Token[] }>(`/cards/${CARD}/tokens/move`, { toCardKey: NEW_CARD, reason: 'replaced' }, { 'idempotency-key': 'op-move' });
      expect(moved.status, moved.text).to.equal(200);
      expect(moved.body.moved.map((t) => [t.tokenReference, t.cardKey, t.status, t.version]).sort()).to.deep.equal(
        [[active.tokenReference, NEW_CARD, 'active', 2], [suspended.tokenReference, NEW_CARD, 'suspended', 3]].sort(),
      );
      expect((await call<{ data: Token[] }>(`${url}/tokens?cardKey=${CARD}`)).body.data.map((t) => t.tokenReference)).to.deep.equal([pending.tokenReference]);
      expect((await call<{ data: Token[] }>(`${url}/tokens?cardKey=${NEW_CARD}`)).body.data.map((t) => t.tokenReference)).to.deep.equal([suspended.tokenReference, active.tokenReference]);
      await receiver.waitForNotifications((n) => n.body.change === 'card_updated', 2);
      expect(receiver.notificationsOf(active.tokenReference).at(-1)!.body).to.deep.include({ type: 'token.updated', change: 'card_updated', token: await read(active.tokenReference) });
      const replay = await post<{ moved: Token[] }>(`/cards/${CARD}/tokens/move`, { toCardKey: NEW_CARD, reason: 'replaced' }, { 'idempotency-key': 'op-move' });
      expect(replay.body).to.deep.equal(moved.body);
      expect((await read(active.tokenReference)).version).to.equal(2);
      expect((await post(`/cards/${CARD}/tokens/move`, { toCardKey: NEW_CARD, reason: 'reissued' })).body).to.deep.equal({ moved: [] });
      await refused(`/cards/CK-UNKNOWN/tokens/move`, { toCardKey: NEW_CARD, reason: 'replaced' }, 404, 'CARD_NOT_FOUND');
      await refused(`/cards/${NEW_CARD}/tokens/move`, { toCardKey: 'CK-UNKNOWN', reason: 'replaced' }, 404, 'CARD_NOT_FOUND');
      await refused(`/cards/${NEW_CARD}/tokens/move`, { toCardKey: NEW_CARD, reason: 'replaced' }, 400, 'VALIDATION_ERROR');
      await refused(`/cards/${NEW_CARD}/tokens/move`, { toCardKey: CARD, reason: 'lost' }, 400, 'VALIDATION_ERROR');
      const listed = (await sandboxTokens(NEW_CARD)).find((t) => t.tokenReference === active.tokenReference)!;
      expect(listed.operationIds).to.deep.equal(['op-move']);
      expect(listed.history.at(-1)).to.deep.include({ status: 'active', cardKey: NEW_CARD, reason: 'replaced' });
    });
  });

  describe('network changes (10.9 network-status) and reads', () => {
    it('a change the network made, notified as asked: suspended, resumed, deactivated; drop leaves it to the feed; a status it cannot take is 409', async () => {
      const token = await activeToken();
      const suspended = await post<Token>(`/__sandbox/tokens/${token.tokenReference}/network-status`, { status: 'suspended', reason: 'device_lost' });
      expect(suspended.body).to.deep.include({ status: 'suspended', version: 2 });
      expect(receiver.notificationsOf(token.tokenReference).at(-1)!.body).to.deep.include({ change: 'suspended', reason: 'device_lost' });
      const resumed = await post<Token>(`/__sandbox/tokens/${token.tokenReference}/network-status`, { status: 'active', notify: 'drop' });
      expect(resumed.body).to.deep.include({ status: 'active', version: 3 });
      expect(receiver.notificationsOf(token.tokenReference), 'dropped').to.have.length(2);
      const feed = (await call<{ data: Token[] }>(`${url}/tokens/changes`)).body.data;
      expect(feed.find((t) => t.tokenReference === token.tokenReference)).to.deep.equal(resumed.body);
      await refused(`/__sandbox/tokens/${token.tokenReference}/network-status`, { status: 'active' }, 409, 'TOKEN_TRANSITION_INVALID');
      await refused(`/__sandbox/tokens/${token.tokenReference}/network-status`, { status: 'declined' }, 400, 'VALIDATION_ERROR');
      expect((await post<Token>(`/__sandbox/tokens/${token.tokenReference}/network-status`, { status: 'deactivated', reason: 'wallet_removed' })).body.status).to.equal('deactivated');
      await refused(`/__sandbox/tokens/${token.tokenReference}/network-status`, { status: 'active' }, 409, 'TOKEN_TRANSITION_INVALID');
    });

    it('GET /tokens/{ref} 404 TOKEN_NOT_FOUND when unknown; GET /tokens needs a cardKey; a card\'s tokens newest first', async () => {
      expect((await call<ErrorBody>(`${url}/tokens/tref_000000000000000000000000`)).body.errorCode).to.equal('TOKEN_NOT_FOUND');
      const answer = await call<ErrorBody>(`${url}/tokens`);
      expect(answer.status).to.equal(400);
      expect(answer.body.details?.[0].path).to.equal('?cardKey');
      const a = await activeToken();
      const b = await activeToken({ walletProvider: 'google_pay' });
      await activeToken({ cardId: OTHER_CARD });
      expect((await call<{ data: Token[] }>(`${url}/tokens?cardKey=${CARD}`)).body.data.map((t) => t.tokenReference)).to.deep.equal([b.tokenReference, a.tokenReference]);
      expect((await call<{ data: Token[] }>(`${url}/tokens?cardKey=CK-NONE`)).body).to.deep.equal({ data: [] });
    });
  });

  describe('authorizations with a token (10.8)', () => {
    it('POST /__sandbox/authorizations {tokenReference}: asks the gateway with authorization.token and the token\'s current card (its new card after a move); the transaction carries tokenReference, a card purchase null', async () => {
      const token = await activeToken({ walletProvider: 'google_pay' });
      const first = await post<Transaction>('/__sandbox/authorizations', { tokenReference: token.tokenReference, amount: 12 });
      expect(first.status, first.text).to.equal(201);
      expect(first.body).to.deep.include({ cardId: CARD, tokenReference: token.tokenReference, status: 'PENDING' });
      expect((receiver.authorizations.at(-1)!.body.authorization as Record<string, unknown>)).to.deep.include({ cardId: CARD, token: { reference: token.tokenReference, walletProvider: 'google_pay' } });
      await post(`/cards/${CARD}/tokens/move`, { toCardKey: NEW_CARD, reason: 'reissued' });
      const second = await post<Transaction>('/__sandbox/authorizations', { tokenReference: token.tokenReference, amount: 5 });
      expect(second.body).to.deep.include({ cardId: NEW_CARD, tokenReference: token.tokenReference });
      expect((receiver.authorizations.at(-1)!.body.authorization as Record<string, unknown>).cardId).to.equal(NEW_CARD);
      const plain = await post<Transaction>('/__sandbox/authorizations', { cardId: CARD, amount: 3 });
      expect(plain.body.tokenReference).to.equal(null);
      expect(receiver.authorizations.at(-1)!.body.authorization).to.not.have.property('token');
      expect((await call<Transaction>(`${url}/transactions/${first.body.id}`)).body.tokenReference).to.equal(token.tokenReference);
      // Its clearing and refund keep the token.
      await post(`/__sandbox/transactions/${first.body.id}/clearing`);
      const refund = await post<Transaction>(`/__sandbox/transactions/${first.body.id}/refund`, { amount: 2 });
      expect(refund.body.tokenReference).to.equal(token.tokenReference);
      await refused('/__sandbox/authorizations', { tokenReference: 'tref_000000000000000000000000', amount: 1 }, 404, 'TOKEN_NOT_FOUND');
      await refused('/__sandbox/authorizations', { tokenReference: token.tokenReference, cardId: CARD, amount: 1 }, 400, 'VALIDATION_ERROR');
      await refused('/__sandbox/authorizations', { tokenReference: 'has space', amount: 1 }, 400, 'VALIDATION_ERROR');
    });
  });

  it('TOKENIZATION_DEADLINE_MS: 1000 to 10000 as the gateway reads it, else the default 2000', () => {
    expect(tokenizationDeadlineMs({})).to.equal(2000);
    expect(tokenizationDeadlineMs({ TOKENIZATION_DEADLINE_MS: '1500' })).to.equal(1500);
    for (const bad of ['999', '10001', '1500.5', 'soon', '']) expect(tokenizationDeadlineMs({ TOKENIZATION_DEADLINE_MS: bad }), bad).to.equal(2000);
  });

  describe('bounded state', () => {
    it('a card evicted takes its tokens (reads, tokenization ids, the feed); a reset forgets them all', () => {
      const state = new ProcessingState(2);
      state.register({ cardKey: 'A' }, 'control');
      const made = state.tokens.create(
        { tokenReference: 'tref_a', cardKey: 'A', tokenizationId: 'tkz_a', walletProvider: 'apple_pay', tokenRequestorId: '50110030273', last4: '1111', tokenExpDate: '01/2030', device: { type: 'phone' }, status: 'active', requestedBy: 'gateway', decision: { decision: 'approve' } },
        'drop',
      );
      expect(made.token.version).to.equal(1);
      expect(state.tokens.size).to.equal(1);
      state.register({ cardKey: 'B' }, 'control');
      state.register({ cardKey: 'C' }, 'control');
      expect(state.tokens.size, 'evicted with card A').to.equal(0);
      expect(() => state.tokens.find('tref_a')).to.throw(/No token/);
      expect(state.tokens.ofTokenization('tkz_a', 'A')).to.equal(undefined);
      expect(state.tokens.changes(undefined, 10).data).to.deep.equal([]);
    });

    it('at most maxCards × 10 tokens in all and 100 a card: the oldest goes first', () => {
      const state = new ProcessingState(1);
      state.register({ cardKey: 'A' }, 'control');
      const make = (i: number) =>
        state.tokens.create(
          { tokenReference: `tref_${i}`, cardKey: 'A', tokenizationId: null, walletProvider: 'merchant', tokenRequestorId: '50100000001', last4: '1111', tokenExpDate: '01/2030', device: { type: 'other' }, status: 'active', requestedBy: 'gateway', decision: { decision: 'approve' } },
          'drop',
        );
      for (let i = 0; i < 12; i++) make(i);
      expect(state.tokens.size).to.equal(10);
      expect(state.tokens.get('tref_1'), 'the oldest went first').to.equal(undefined);
      expect(state.tokens.ofCard('A').map((t) => t.tokenReference)[0]).to.equal('tref_11');
      state.clear();
      expect(state.tokens.size).to.equal(0);
    });
  });
});
