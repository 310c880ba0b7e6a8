import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { api, cardBody, individualBody, sandboxControl, sandboxUrls } from '../support/api';
import { sharedGateway, type Gateway } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { runDatabaseUrl } from '../support/test-database';
import { waitFor } from '../support/wait';
import { newTokenId } from '../../gateway/ids';

/**
 * Issue 35's bad-input table (docs/tokens.md, "Bodies" and "Statuses and the transitions allowed"):
 * every malformed provisioning body, unknown wallet, forbidden transition and bad id is refused with
 * its status and problem code, as `application/problem+json`, and changes nothing. Each case is run
 * between two snapshots of everything a refusal could change: the partners' token rows (their
 * history with them), cards, spend controls, audit entries, events (rows, and `GET
 * /events?type=token.updated`), outbox messages, idempotency keys, the tokenization decisions and
 * verification attempts of their cards and tokens, the processing sandbox's tokens with their
 * processor-side history and operation ids, and the requests it received. Through the run's shared
 * gateway over real HTTP on real PostgreSQL; the tokens are made by the sandbox's tokenization
 * simulation and moved into their states by the partner's routes and the card's cascade.
 */

/** The cards and tokens the table names (filled in by `before`). */
interface Fixture {
  card: { active: string; locked: string; tempLocked: string; restricted: string; stolen: string; closed: string; physical: string; other: string };
  token: {
    /** On the ACTIVE card, up to `requested`. */
    active: string;
    suspendedByPartner: string;
    pending: string;
    declined: string;
    deactivated: string;
    /** Suspended by the network on its own (the processor's notification). */
    suspendedByNetwork: string;
    /** `requested`: a token the processor made without the gateway's decision, written into the database as its notification records it (its processor side is not played). */
    requested: string;
    /** On the LOCKED card: suspended by the lock's cascade. */
    suspendedByCard: string;
    /** On the LOCKED card: suspended by the partner before the lock. */
    suspendedByPartnerOnLocked: string;
    /** On the RESTRICTED (S1) card: suspended by the restriction's cascade. */
    suspendedByRestriction: string;
    /** On the STOLEN card: deactivated by the report's cascade. */
    deactivatedByCard: string;
    /** Partner B's, on its card. */
    other: string;
  };
}

/** One refusal (or idempotent success) of the table. */
interface Case {
  title: string;
  /** Who calls: partner A (default) or B. */
  as?: 'a' | 'b';
  method: 'GET' | 'POST' | 'PUT';
  path: (f: Fixture) => string;
  /** A JSON body; `raw` sends text as it is (with `Content-Type: application/json`); neither: no body. */
  body?: unknown;
  raw?: string;
  status: number;
  /** The problem's `code` (absent for a 200). */
  code?: string;
  /** A name `invalidParams` must hold. */
  param?: string;
  /** Members the problem carries besides its code (`tokenStatus`, `cardStatus`…). */
  members?: Record<string, unknown>;
  /** The token status a 200 answers. */
  tokenStatus?: string;
  /**
   * The one audit entry the call may add, of this request: an idempotent success (`unchanged`, docs/tokens.md's
   * "200, unchanged (no event)") or the failure entry of a processor's own 409 ("no audit entry of success").
   */
  audit?: { outcome: 'success' | 'failure'; details: Record<string, unknown> };
}

const b64 = (bytes: number) => crypto.randomBytes(bytes).toString('base64');
const omit = (body: Record<string, unknown>, name: string) => Object.fromEntries(Object.entries(body).filter(([key]) => key !== name));
const CERTIFICATE = b64(600);
const APPLE: Record<string, unknown> = { certificates: [CERTIFICATE, b64(450)], nonce: b64(16), nonceSignature: b64(70) };
const GOOGLE: Record<string, unknown> = { walletAccountId: 'wallet-account-1', deviceId: 'device-1' };
const MALFORMED_JSON = '{"certificates": ["AAAA"], "nonce": ';

const apple = (f: Fixture) => `/cards/${f.card.active}/wallet-provisioning/apple-pay`;
const google = (f: Fixture) => `/cards/${f.card.active}/wallet-provisioning/google-pay`;
const tokenize = (f: Fixture) => `/simulate/cards/${f.card.active}/tokenizations`;
const verify = (f: Fixture) => `/simulate/tokens/${f.token.pending}/verify`;
const invalid = (param: string) => ({ status: 400, code: 'validation_failed', param });

const CASES: Case[] = [
  // --- Apple Pay provisioning: every member of tokens.md's "Bodies" -----------------------------
  { title: 'apple-pay without certificates', method: 'POST', path: apple, body: omit(APPLE, 'certificates'), ...invalid('certificates') },
  { title: 'apple-pay without nonce', method: 'POST', path: apple, body: omit(APPLE, 'nonce'), ...invalid('nonce') },
  { title: 'apple-pay without nonceSignature', method: 'POST', path: apple, body: omit(APPLE, 'nonceSignature'), ...invalid('nonceSignature') },
  { title: 'apple-pay with an empty object', method: 'POST', path: apple, body: {}, ...invalid('certificates') },
  { title: 'apple-pay certificates a string', method: 'POST', path: apple, body: { ...APPLE, certificates: CERTIFICATE }, ...invalid('certificates') },
  { title: 'apple-pay certificates an object', method: 'POST', path: apple, body: { ...APPLE, certificates: { 0: CERTIFICATE } }, ...invalid('certificates') },
  { title: 'apple-pay a certificate a number', method: 'POST', path: apple, body: { ...APPLE, certificates: [CERTIFICATE, 42] }, ...invalid('certificates.1') },
  { title: 'apple-pay a certificate null', method: 'POST', path: apple, body: { ...APPLE, certificates: [null] }, ...invalid('certificates.0') },
  { title: 'apple-pay nonce a number', method: 'POST', path: apple, body: { ...APPLE, nonce: 12345678 }, ...invalid('nonce') },
  { title: 'apple-pay nonce an array', method: 'POST', path: apple, body: { ...APPLE, nonce: [APPLE.nonce] }, ...invalid('nonce') },
  { title: 'apple-pay nonceSignature null', method: 'POST', path: apple, body: { ...APPLE, nonceSignature: null }, ...invalid('nonceSignature') },
  { title: 'apple-pay nonceSignature a boolean', method: 'POST', path: apple, body: { ...APPLE, nonceSignature: true }, ...invalid('nonceSignature') },
  { title: 'apple-pay empty certificates', method: 'POST', path: apple, body: { ...APPLE, certificates: [] }, ...invalid('certificates') },
  { title: 'apple-pay four certificates', method: 'POST', path: apple, body: { ...APPLE, certificates: [CERTIFICATE, CERTIFICATE, CERTIFICATE, CERTIFICATE] }, ...invalid('certificates') },
  { title: 'apple-pay a certificate not base64', method: 'POST', path: apple, body: { ...APPLE, certificates: ['*'.repeat(200)] }, ...invalid('certificates.0') },
  { title: 'apple-pay a certificate in base64url', method: 'POST', path: apple, body: { ...APPLE, certificates: [`${'A'.repeat(96)}-_AA`] }, ...invalid('certificates.0') },
  { title: 'apple-pay a certificate as PEM lines', method: 'POST', path: apple, body: { ...APPLE, certificates: [`${CERTIFICATE.slice(0, 64)}\n${CERTIFICATE.slice(64)}`] }, ...invalid('certificates.0') },
  { title: 'apple-pay a certificate without its padding', method: 'POST', path: apple, body: { ...APPLE, certificates: [b64(301).replace(/=+$/, '')] }, ...invalid('certificates.0') },
  { title: 'apple-pay a certificate too short (96 characters)', method: 'POST', path: apple, body: { ...APPLE, certificates: ['A'.repeat(96)] }, ...invalid('certificates.0') },
  { title: 'apple-pay a certificate too long (4,100 characters)', method: 'POST', path: apple, body: { ...APPLE, certificates: ['A'.repeat(4100)] }, ...invalid('certificates.0') },
  { title: 'apple-pay the second certificate empty', method: 'POST', path: apple, body: { ...APPLE, certificates: [CERTIFICATE, ''] }, ...invalid('certificates.1') },
  { title: 'apple-pay nonce not base64', method: 'POST', path: apple, body: { ...APPLE, nonce: 'not base64!' }, ...invalid('nonce') },
  { title: 'apple-pay nonce in base64url', method: 'POST', path: apple, body: { ...APPLE, nonce: 'q7l3-_8=' }, ...invalid('nonce') },
  { title: 'apple-pay nonce without its padding', method: 'POST', path: apple, body: { ...APPLE, nonce: 'q7l3Bw' }, ...invalid('nonce') },
  { title: 'apple-pay nonce of 3 bytes', method: 'POST', path: apple, body: { ...APPLE, nonce: b64(3) }, ...invalid('nonce') },
  { title: 'apple-pay nonce of 65 bytes', method: 'POST', path: apple, body: { ...APPLE, nonce: b64(65) }, ...invalid('nonce') },
  { title: 'apple-pay nonce empty', method: 'POST', path: apple, body: { ...APPLE, nonce: '' }, ...invalid('nonce') },
  { title: 'apple-pay nonceSignature not base64', method: 'POST', path: apple, body: { ...APPLE, nonceSignature: `${'A'.repeat(23)}!` }, ...invalid('nonceSignature') },
  { title: 'apple-pay nonceSignature of 15 bytes', method: 'POST', path: apple, body: { ...APPLE, nonceSignature: b64(15) }, ...invalid('nonceSignature') },
  { title: 'apple-pay nonceSignature of 513 bytes', method: 'POST', path: apple, body: { ...APPLE, nonceSignature: b64(513) }, ...invalid('nonceSignature') },
  { title: 'apple-pay an unknown member', method: 'POST', path: apple, body: { ...APPLE, extra: 1 }, ...invalid('extra') },
  { title: 'apple-pay a cardKey member (the path names the card)', method: 'POST', path: apple, body: { ...APPLE, cardKey: 'CK0000000000000000' }, ...invalid('cardKey') },
  { title: 'apple-pay a body that is an array', method: 'POST', path: apple, body: [APPLE], ...invalid('body') },
  // The strict parser takes objects and arrays only (gateway/http/body.ts): a JSON scalar is malformed_json.
  { title: 'apple-pay a body that is a JSON string', method: 'POST', path: apple, body: 'certificates', status: 400, code: 'malformed_json' },
  { title: 'apple-pay a body that is not JSON', method: 'POST', path: apple, raw: MALFORMED_JSON, status: 400, code: 'malformed_json' },
  { title: 'apple-pay no body', method: 'POST', path: apple, status: 400, code: 'body_required' },

  // --- Google Pay provisioning -------------------------------------------------------------------
  { title: 'google-pay without walletAccountId', method: 'POST', path: google, body: omit(GOOGLE, 'walletAccountId'), ...invalid('walletAccountId') },
  { title: 'google-pay without deviceId', method: 'POST', path: google, body: omit(GOOGLE, 'deviceId'), ...invalid('deviceId') },
  { title: 'google-pay with an empty object', method: 'POST', path: google, body: {}, ...invalid('walletAccountId') },
  { title: 'google-pay walletAccountId a number', method: 'POST', path: google, body: { ...GOOGLE, walletAccountId: 1234 }, ...invalid('walletAccountId') },
  { title: 'google-pay deviceId null', method: 'POST', path: google, body: { ...GOOGLE, deviceId: null }, ...invalid('deviceId') },
  { title: 'google-pay deviceId an array', method: 'POST', path: google, body: { ...GOOGLE, deviceId: ['device-1'] }, ...invalid('deviceId') },
  { title: 'google-pay walletAccountId empty', method: 'POST', path: google, body: { ...GOOGLE, walletAccountId: '' }, ...invalid('walletAccountId') },
  { title: 'google-pay walletAccountId of 65 characters', method: 'POST', path: google, body: { ...GOOGLE, walletAccountId: 'w'.repeat(65) }, ...invalid('walletAccountId') },
  { title: 'google-pay walletAccountId with a space', method: 'POST', path: google, body: { ...GOOGLE, walletAccountId: 'wallet account' }, ...invalid('walletAccountId') },
  { title: 'google-pay deviceId not ASCII', method: 'POST', path: google, body: { ...GOOGLE, deviceId: 'dévice-1' }, ...invalid('deviceId') },
  { title: 'google-pay deviceId with a control character', method: 'POST', path: google, body: { ...GOOGLE, deviceId: 'device\u00001' }, ...invalid('deviceId') },
  { title: 'google-pay deviceId of 65 characters', method: 'POST', path: google, body: { ...GOOGLE, deviceId: 'd'.repeat(65) }, ...invalid('deviceId') },
  { title: 'google-pay an unknown member', method: 'POST', path: google, body: { ...GOOGLE, extra: 'x' }, ...invalid('extra') },
  { title: 'google-pay a body that is an array', method: 'POST', path: google, body: [], ...invalid('body') },
  { title: 'google-pay a body that is not JSON', method: 'POST', path: google, raw: '{"walletAccountId": "w", ', status: 400, code: 'malformed_json' },
  { title: 'google-pay no body', method: 'POST', path: google, status: 400, code: 'body_required' },

  // --- Provisioning a card that is not ACTIVE ----------------------------------------------------
  ...(
    [
      ['locked', 'LOCKED', 'L1'],
      ['tempLocked', 'TEMP_LOCKED', 'T1'],
      ['restricted', 'RESTRICTED', 'S1'],
      ['stolen', 'STOLEN', 'S3'],
      ['closed', 'CLOSED', 'S4'],
      ['physical', 'LOCKED', 'I1'],
    ] as const
  ).flatMap(([card, cardStatus, statusCode]): Case[] =>
    (['apple-pay', 'google-pay'] as const).map((wallet) => ({
      title: `${wallet} of a ${cardStatus} card (${statusCode})`,
      method: 'POST',
      path: (f: Fixture) => `/cards/${f.card[card]}/wallet-provisioning/${wallet}`,
      body: wallet === 'apple-pay' ? APPLE : GOOGLE,
      status: 409,
      code: 'card_not_active',
      members: { cardStatus, statusCode },
    }))
  ),

  // --- An unknown wallet, device or verdict: the tokenization simulation ------------------------
  { title: 'tokenization walletProvider paypal', method: 'POST', path: tokenize, body: { walletProvider: 'paypal' }, ...invalid('walletProvider') },
  { title: 'tokenization walletProvider empty', method: 'POST', path: tokenize, body: { walletProvider: '' }, ...invalid('walletProvider') },
  { title: 'tokenization walletProvider APPLE_PAY (case)', method: 'POST', path: tokenize, body: { walletProvider: 'APPLE_PAY' }, ...invalid('walletProvider') },
  { title: 'tokenization walletProvider apple-pay (the route\'s spelling)', method: 'POST', path: tokenize, body: { walletProvider: 'apple-pay' }, ...invalid('walletProvider') },
  { title: 'tokenization walletProvider a number', method: 'POST', path: tokenize, body: { walletProvider: 1 }, ...invalid('walletProvider') },
  { title: 'tokenization walletProvider null', method: 'POST', path: tokenize, body: { walletProvider: null }, ...invalid('walletProvider') },
  { title: 'tokenization walletProvider an array', method: 'POST', path: tokenize, body: { walletProvider: ['apple_pay'] }, ...invalid('walletProvider') },
  { title: 'tokenization without walletProvider', method: 'POST', path: tokenize, body: { networkVerdict: 'approve' }, ...invalid('walletProvider') },
  { title: 'tokenization device a string', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', device: 'phone' }, ...invalid('device') },
  { title: 'tokenization device without type', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', device: { name: 'Ada\'s iPhone' } }, ...invalid('device.type') },
  { title: 'tokenization device of an unknown type', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', device: { type: 'toaster' } }, ...invalid('device.type') },
  { title: 'tokenization device name empty', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', device: { type: 'phone', name: '' } }, ...invalid('device.name') },
  { title: 'tokenization device name of 65 characters', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', device: { type: 'phone', name: 'n'.repeat(65) } }, ...invalid('device.name') },
  { title: 'tokenization device ipCountry lower case', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', device: { type: 'phone', ipCountry: 'gb' } }, ...invalid('device.ipCountry') },
  { title: 'tokenization device ipCountry alpha-3', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', device: { type: 'phone', ipCountry: 'GBR' } }, ...invalid('device.ipCountry') },
  { title: 'tokenization device with an unknown member', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', device: { type: 'phone', imei: '490154203237518' } }, ...invalid('device.imei') },
  { title: 'tokenization networkVerdict allow', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', networkVerdict: 'allow' }, ...invalid('networkVerdict') },
  { title: 'tokenization networkVerdict APPROVE (case)', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', networkVerdict: 'APPROVE' }, ...invalid('networkVerdict') },
  { title: 'tokenization networkVerdict a boolean', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', networkVerdict: true }, ...invalid('networkVerdict') },
  { title: 'tokenization networkVerdict stand_in (the processor\'s, not the network\'s)', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', networkVerdict: 'stand_in' }, ...invalid('networkVerdict') },
  { title: 'tokenization tokenizationId empty', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', tokenizationId: '' }, ...invalid('tokenizationId') },
  { title: 'tokenization tokenizationId of 101 characters', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', tokenizationId: 't'.repeat(101) }, ...invalid('tokenizationId') },
  { title: 'tokenization tokenizationId with a space', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', tokenizationId: 'tkz 1' }, ...invalid('tokenizationId') },
  { title: 'tokenization an unknown member', method: 'POST', path: tokenize, body: { walletProvider: 'apple_pay', tokenRequestorId: '50110030273' }, ...invalid('tokenRequestorId') },
  { title: 'tokenization a body that is not JSON', method: 'POST', path: tokenize, raw: '{"walletProvider": apple_pay}', status: 400, code: 'malformed_json' },
  { title: 'tokenization no body', method: 'POST', path: tokenize, status: 400, code: 'body_required' },

  // --- An unknown wallet in the spend controls (docs/spend-controls.md: PUT, the card's and the default) ---
  ...(
    [
      ['card', (f: Fixture) => `/cards/${f.card.active}/spend-controls`],
      ['default', () => '/spend-controls'],
    ] as const
  ).flatMap(([scope, path]): Case[] => [
    { title: `${scope} spend controls allowedWalletProviders [paypal]`, method: 'PUT', path, body: { allowedWalletProviders: ['paypal'] }, ...invalid('allowedWalletProviders.0') },
    { title: `${scope} spend controls blockedWalletProviders [google_pay, paypal]`, method: 'PUT', path, body: { blockedWalletProviders: ['google_pay', 'paypal'] }, ...invalid('blockedWalletProviders.1') },
    { title: `${scope} spend controls allowedWalletProviders with a duplicate`, method: 'PUT', path, body: { allowedWalletProviders: ['apple_pay', 'apple_pay'] }, ...invalid('allowedWalletProviders') },
    { title: `${scope} spend controls blockedWalletProviders with a duplicate`, method: 'PUT', path, body: { blockedWalletProviders: ['merchant', 'samsung_pay', 'merchant'] }, ...invalid('blockedWalletProviders') },
    { title: `${scope} spend controls allowedWalletProviders empty`, method: 'PUT', path, body: { allowedWalletProviders: [] }, ...invalid('allowedWalletProviders') },
    { title: `${scope} spend controls allowedWalletProviders a string`, method: 'PUT', path, body: { allowedWalletProviders: 'apple_pay' }, ...invalid('allowedWalletProviders') },
    { title: `${scope} spend controls blockedWalletProviders of five`, method: 'PUT', path, body: { blockedWalletProviders: ['apple_pay', 'google_pay', 'samsung_pay', 'merchant', 'apple_pay'] }, ...invalid('blockedWalletProviders') },
  ]),

  // --- An unknown wallet or status in the search -------------------------------------------------
  { title: 'GET /tokens walletProvider=paypal', method: 'GET', path: () => '/tokens?walletProvider=paypal', ...invalid('walletProvider') },
  { title: 'GET /tokens walletProvider=APPLE_PAY', method: 'GET', path: () => '/tokens?walletProvider=APPLE_PAY', ...invalid('walletProvider') },
  { title: 'GET /tokens status=bogus', method: 'GET', path: () => '/tokens?status=bogus', ...invalid('status') },
  { title: 'GET /tokens status empty', method: 'GET', path: () => '/tokens?status=', ...invalid('status') },
  { title: 'GET /tokens limit=0', method: 'GET', path: () => '/tokens?limit=0', ...invalid('limit') },
  { title: 'GET /tokens limit=101', method: 'GET', path: () => '/tokens?limit=101', ...invalid('limit') },
  { title: 'GET /tokens limit=ten', method: 'GET', path: () => '/tokens?limit=ten', ...invalid('limit') },
  { title: 'GET /tokens limit=1.5', method: 'GET', path: () => '/tokens?limit=1.5', ...invalid('limit') },

  // --- Forbidden transitions: every 409 cell of tokens.md's routes table --------------------------
  ...(['suspend', 'resume', 'deactivate'] as const).flatMap((action): Case[] => [
    { title: `${action} of a deactivated token`, method: 'POST', path: (f) => `/tokens/${f.token.deactivated}/${action}`, body: {}, status: 409, code: 'token_transition_invalid', members: { tokenStatus: 'deactivated' } },
    { title: `${action} of a token the card's theft deactivated`, method: 'POST', path: (f) => `/tokens/${f.token.deactivatedByCard}/${action}`, body: { reason: 'found again' }, status: 409, code: 'token_transition_invalid', members: { tokenStatus: 'deactivated' } },
    { title: `${action} of a declined token`, method: 'POST', path: (f) => `/tokens/${f.token.declined}/${action}`, body: {}, status: 409, code: 'token_transition_invalid', members: { tokenStatus: 'declined' } },
  ]),
  ...(['suspend', 'resume'] as const).map((action): Case => ({
    title: `${action} of a pending_verification token`,
    method: 'POST',
    path: (f) => `/tokens/${f.token.pending}/${action}`,
    body: {},
    status: 409,
    code: 'token_transition_invalid',
    members: { tokenStatus: 'pending_verification' },
  })),
  ...(['suspend', 'resume'] as const).map((action): Case => ({
    title: `${action} of a requested token`,
    method: 'POST',
    path: (f) => `/tokens/${f.token.requested}/${action}`,
    body: {},
    status: 409,
    code: 'token_transition_invalid',
    members: { tokenStatus: 'requested' },
  })),
  ...(
    [
      ['suspendedByCard', "the card's lock suspended", 'LOCKED', 'L1'],
      ['suspendedByPartnerOnLocked', 'the partner suspended', 'LOCKED', 'L1'],
      ['suspendedByRestriction', "the card's restriction suspended", 'RESTRICTED', 'S1'],
    ] as const
  ).map(
    ([token, by, cardStatus, statusCode]): Case => ({
      title: `resume of a token ${by}, the card still ${cardStatus}`,
      method: 'POST',
      path: (f) => `/tokens/${f.token[token]}/resume`,
      body: {},
      status: 409,
      code: 'card_not_active',
      members: { cardStatus, statusCode },
    })
  ),
  // The idempotent cells: 200, the token unchanged, no event, no processor call (the audit entry says `unchanged`).
  {
    title: 'resume of an active token (200, unchanged)',
    method: 'POST',
    path: (f) => `/tokens/${f.token.active}/resume`,
    body: {},
    status: 200,
    tokenStatus: 'active',
    audit: { outcome: 'success', details: { status: 'active', unchanged: true } },
  },
  ...(
    [
      ['suspendedByPartner', 'the partner'],
      ['suspendedByNetwork', 'the network'],
    ] as const
  ).map(
    ([token, by]): Case => ({
      title: `suspend of a token ${by} suspended (200, unchanged)`,
      method: 'POST',
      path: (f) => `/tokens/${f.token[token]}/suspend`,
      body: { reason: 'again' },
      status: 200,
      tokenStatus: 'suspended',
      audit: { outcome: 'success', details: { status: 'suspended', unchanged: true } },
    })
  ),

  // --- The change's body ---------------------------------------------------------------------------
  ...(['suspend', 'deactivate'] as const).flatMap((action): Case[] => [
    { title: `${action} with a reason of 201 characters`, method: 'POST', path: (f) => `/tokens/${f.token.active}/${action}`, body: { reason: 'r'.repeat(201) }, ...invalid('reason') },
    { title: `${action} with a reason that is a number`, method: 'POST', path: (f) => `/tokens/${f.token.active}/${action}`, body: { reason: 42 }, ...invalid('reason') },
    { title: `${action} with an empty reason`, method: 'POST', path: (f) => `/tokens/${f.token.active}/${action}`, body: { reason: '' }, ...invalid('reason') },
    { title: `${action} with an unknown member`, method: 'POST', path: (f) => `/tokens/${f.token.active}/${action}`, body: { requestedBy: 'card_state' }, ...invalid('requestedBy') },
    { title: `${action} with a body that is not JSON`, method: 'POST', path: (f) => `/tokens/${f.token.active}/${action}`, raw: '{"reason": "lost phone"', status: 400, code: 'malformed_json' },
    { title: `${action} with no body`, method: 'POST', path: (f) => `/tokens/${f.token.active}/${action}`, status: 400, code: 'body_required' },
  ]),
  { title: 'resume with a reason that is an object', method: 'POST', path: (f) => `/tokens/${f.token.suspendedByPartner}/resume`, body: { reason: { text: 'back' } }, ...invalid('reason') },
  { title: 'resume with a body that is an array', method: 'POST', path: (f) => `/tokens/${f.token.suspendedByPartner}/resume`, body: [], ...invalid('body') },

  // --- The verification simulation ------------------------------------------------------------------
  { title: 'verify without code', method: 'POST', path: verify, body: {}, ...invalid('code') },
  { title: 'verify with an empty code', method: 'POST', path: verify, body: { code: '' }, ...invalid('code') },
  { title: 'verify with a code of 65 characters', method: 'POST', path: verify, body: { code: '1'.repeat(65) }, ...invalid('code') },
  { title: 'verify with a code that is a number', method: 'POST', path: verify, body: { code: 123456 }, ...invalid('code') },
  { title: 'verify with a code that is an array', method: 'POST', path: verify, body: { code: ['123456'] }, ...invalid('code') },
  { title: 'verify with an unknown member', method: 'POST', path: verify, body: { code: '123456', attempt: 1 }, ...invalid('attempt') },
  { title: 'verify with a body that is not JSON', method: 'POST', path: verify, raw: '{"code": 1234', status: 400, code: 'malformed_json' },
  { title: 'verify with no body', method: 'POST', path: verify, status: 400, code: 'body_required' },
  // The processor's own 409: the sandbox is asked, changes nothing, and the failure is audited (tokens.md: "no audit entry of success").
  ...(['declined', 'active'] as const).map((token): Case => ({
    title: `verify of ${token === 'active' ? 'an' : 'a'} ${token} token`,
    method: 'POST',
    path: (f) => `/simulate/tokens/${f.token[token]}/verify`,
    body: { code: '123456' },
    status: 409,
    code: 'token_transition_invalid',
    members: { tokenStatus: token },
    audit: { outcome: 'failure', details: { reason: 'token_transition_invalid' } },
  })),

  // --- Ids: malformed 400, unknown 404, another partner's 403 ----------------------------------------
  ...(
    [
      ['GET', ''],
      ['POST', '/suspend'],
      ['POST', '/resume'],
      ['POST', '/deactivate'],
    ] as const
  ).flatMap(([method, action]): Case[] => {
    const body = method === 'POST' ? {} : undefined;
    return [
      { title: `${method} /tokens/{id}${action} of a malformed id`, method, path: () => `/tokens/tok_123${action}`, body, status: 400, code: 'invalid_id' },
      { title: `${method} /tokens/{id}${action} of an upper-case id`, method, path: () => `/tokens/tok_${'AB'.repeat(12)}${action}`, body, status: 400, code: 'invalid_id' },
      { title: `${method} /tokens/{id}${action} of an unknown id`, method, path: () => `/tokens/${newTokenId()}${action}`, body, status: 404, code: 'not_found' },
      { title: `${method} /tokens/{id}${action} of another partner's token`, method, path: (f) => `/tokens/${f.token.other}${action}`, body, status: 403, code: 'forbidden' },
      { title: `${method} /tokens/{id}${action} of A's token, as partner B`, as: 'b', method, path: (f) => `/tokens/${f.token.active}${action}`, body, status: 403, code: 'forbidden' },
    ];
  }),
  { title: 'verify of a malformed token id', method: 'POST', path: () => '/simulate/tokens/not-a-token/verify', body: { code: '123456' }, status: 400, code: 'invalid_id' },
  { title: 'verify of an unknown token', method: 'POST', path: () => `/simulate/tokens/${newTokenId()}/verify`, body: { code: '123456' }, status: 404, code: 'not_found' },
  { title: "verify of another partner's token", method: 'POST', path: (f) => `/simulate/tokens/${f.token.other}/verify`, body: { code: '123456' }, status: 403, code: 'forbidden' },
  { title: 'a purchase with a malformed token id', method: 'POST', path: () => '/simulate/tokens/tok_/authorizations', body: { amount: 1 }, status: 400, code: 'invalid_id' },
  { title: "a purchase with another partner's token", method: 'POST', path: (f) => `/simulate/tokens/${f.token.other}/authorizations`, body: { amount: 1 }, status: 403, code: 'forbidden' },
  { title: 'GET /cards/{id}/tokens of a malformed card id', method: 'GET', path: () => '/cards/bad%20key/tokens', status: 400, code: 'invalid_id' },
  { title: "GET /cards/{id}/tokens of another partner's card", method: 'GET', path: (f) => `/cards/${f.card.other}/tokens`, status: 403, code: 'forbidden' },
  ...(['apple-pay', 'google-pay'] as const).flatMap((wallet): Case[] => {
    const body = wallet === 'apple-pay' ? APPLE : GOOGLE;
    return [
      { title: `${wallet} of a malformed card id`, method: 'POST', path: () => `/cards/bad%20key/wallet-provisioning/${wallet}`, body, status: 400, code: 'invalid_id' },
      { title: `${wallet} of an unknown card`, method: 'POST', path: () => `/cards/CK${crypto.randomBytes(8).toString('hex').toUpperCase()}/wallet-provisioning/${wallet}`, body, status: 404, code: 'not_found' },
      { title: `${wallet} of another partner's card`, method: 'POST', path: (f) => `/cards/${f.card.other}/wallet-provisioning/${wallet}`, body, status: 403, code: 'forbidden' },
    ];
  }),
  { title: 'tokenization of a malformed card id', method: 'POST', path: () => '/simulate/cards/bad%20key/tokenizations', body: { walletProvider: 'apple_pay' }, status: 400, code: 'invalid_id' },
  { title: 'tokenization of an unknown card', method: 'POST', path: () => `/simulate/cards/CK${crypto.randomBytes(8).toString('hex').toUpperCase()}/tokenizations`, body: { walletProvider: 'apple_pay' }, status: 404, code: 'not_found' },
  { title: "tokenization of another partner's card", method: 'POST', path: (f) => `/simulate/cards/${f.card.other}/tokenizations`, body: { walletProvider: 'apple_pay' }, status: 403, code: 'forbidden' },
];

describe('e2e: tokens, bad input (issue 35): every refusal is a problem with its code and changes nothing', function () {
  this.timeout(60_000);
  let gateway: Gateway;
  let a: TestPartner;
  let b: TestPartner;
  let pg: Client;
  let processing: string;
  const f = { card: {}, token: {} } as Fixture;
  /** Cards made after the fixture (the control's), watched as the fixture's are. */
  const extraCards: string[] = [];
  const watchedCards = () => [...Object.values(f.card), ...extraCards];

  const newCard = async (as: TestPartner, type: 'virtual' | 'physical' = 'virtual') => {
    const individual = await api(gateway, as, 'POST', '/individual/accounts', { body: individualBody() });
    expect(individual.status, JSON.stringify(individual.body)).to.equal(201);
    const card = await api(gateway, as, 'POST', `/individual/accounts/${individual.body._id}/cards/${type}`, { body: cardBody(individual.body.clientID) });
    expect(card.status, JSON.stringify(card.body)).to.equal(201);
    return { cardKey: card.body.cardKey as string, expDate: card.body.expDate as string };
  };
  const simulateTokenization = async (as: TestPartner, cardKey: string, body: Record<string, unknown>, status: string) => {
    const r = await api(gateway, as, 'POST', `/simulate/cards/${cardKey}/tokenizations`, { body });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body.status).to.equal(status);
    return r.body._id as string;
  };
  const ok = async (as: TestPartner, path: string, body: unknown) => {
    const r = await api(gateway, as, 'POST', path, { body });
    expect(r.status, `${path}: ${JSON.stringify(r.body)}`).to.equal(200);
    return r.body;
  };

  /** The processor's tokens of the fixture's cards, as the sandbox holds them (status, version, history, operation ids). */
  const processorTokens = async () => {
    const cards = watchedCards();
    const lists = await Promise.all(cards.map((cardKey) => sandboxControl(processing, 'GET', `/__sandbox/tokens?cardKey=${cardKey}`) as Promise<{ tokenReference: string }[]>));
    return Object.fromEntries(cards.map((cardKey, i) => [cardKey, lists[i]]));
  };

  /** Everything a refusal could change: see the file's comment. */
  const snapshot = async () => {
    const partners = [a.id, b.id];
    const cards = watchedCards();
    const rows = async (sql: string, params: unknown[]) => (await pg.query(sql, params)).rows;
    const database = async () => {
      const tokens = await rows('SELECT * FROM tokens WHERE partner_id = ANY($1) ORDER BY id', [partners]);
      const db = {
        tokens,
        cards: await rows('SELECT * FROM cards WHERE partner_id = ANY($1) ORDER BY card_key', [partners]),
        cardHistory: await rows('SELECT * FROM card_status_history WHERE partner_id = ANY($1) ORDER BY id', [partners]),
        spendControls: await rows('SELECT * FROM spend_controls WHERE partner_id = ANY($1) ORDER BY card_key NULLS FIRST', [partners]),
        events: await rows('SELECT * FROM partner_events WHERE partner_id = ANY($1) ORDER BY seq', [partners]),
        outbox: await rows('SELECT * FROM outbox_events WHERE partner_id = ANY($1) ORDER BY id', [partners]),
        idempotency: await rows('SELECT * FROM idempotency_keys WHERE partner_id = ANY($1) ORDER BY key', [partners]),
        decisions: await rows('SELECT * FROM tokenization_decisions WHERE card_key = ANY($1) ORDER BY tokenization_id', [cards]),
        attempts: await rows('SELECT * FROM token_verification_attempts WHERE token_id = ANY($1) ORDER BY verification_id', [tokens.map((t) => t.id)]),
      };
      return { db, audit: await rows('SELECT * FROM audit_log WHERE partner_id = ANY($1) ORDER BY id', [partners]) };
    };
    // The database's queries run one after another on the file's connection; the HTTP reads beside them.
    const [{ db, audit }, tokenUpdated, processor, calls] = await Promise.all([
      database(),
      Promise.all([a, b].map(async (as) => (await api(gateway, as, 'GET', '/events?type=token.updated&limit=100')).body)),
      processorTokens(),
      sandboxControl(processing, 'GET', '/__sandbox/requests?path=/tokens*') as Promise<{ requestId: string | null }[]>,
    ]);
    return { db, audit, tokenUpdated, processor, calls };
  };
  type Snapshot = Awaited<ReturnType<typeof snapshot>>;

  /**
   * The processor calls made since `before` that concern the fixture (its cards, its tokens'
   * references) or this request: other files' calls to the shared sandbox are left out, and so are
   * the calls the log dropped (a ring of its newest 5,000).
   */
  const newCalls = (before: Snapshot, after: Snapshot, requestId: string) => {
    const seen = new Set(before.calls.map((call) => JSON.stringify(call)));
    const ours = [...watchedCards(), ...after.db.tokens.map((t) => t.processor_ref as string), requestId];
    return after.calls.filter((call) => !seen.has(JSON.stringify(call)) && ours.some((id) => JSON.stringify(call).includes(id)));
  };

  /** Sends a case's request as is (a raw body, or none), with a request id of its own. */
  const send = async (c: Case, requestId: string) => {
    const as = c.as === 'b' ? b : a;
    const headers: Record<string, string> = { authorization: `Bearer ${await as.token()}`, 'x-request-id': requestId };
    const text = c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body));
    if (text !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${gateway.baseUrl}/api/partner${c.path(f)}`, { method: c.method, headers, body: text });
    const raw = await response.text();
    let body: any = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // not JSON: kept as text, and the assertions below say so
    }
    return { status: response.status, contentType: response.headers.get('content-type'), body };
  };

  /** Waits until the processor's tokens and the gateway's agree and no outbox message of the partners is pending. */
  const converged = async () => {
    const pending = await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_events WHERE partner_id = ANY($1) AND delivered_at IS NULL AND failed_at IS NULL', [[a.id, b.id]]);
    if (pending.rows[0].n > 0) return false;
    const held = new Map<string, { status: string; version: number }>();
    for (const list of Object.values(await processorTokens()) as { tokenReference: string; status: string; version: number }[][]) {
      for (const t of list) held.set(t.tokenReference, t);
    }
    const ours = await pg.query<{ processor_ref: string; status: string; version: number }>('SELECT processor_ref, status, version FROM tokens WHERE partner_id = ANY($1)', [[a.id, b.id]]);
    // The `requested` token is the gateway's record alone (the processor's side of it is not played).
    const mirrored = ours.rows.filter((t) => t.status !== 'requested');
    return mirrored.length === held.size && mirrored.every((t) => held.get(t.processor_ref)?.status === t.status && held.get(t.processor_ref)?.version === t.version);
  };

  before(async function () {
    const started = Date.now();
    gateway = await sharedGateway();
    processing = sandboxUrls(gateway).processing;
    [a, b] = await Promise.all([registerPartner(gateway), registerPartner(gateway)]);
    pg = new Client({ connectionString: runDatabaseUrl() });
    await pg.connect();
    const [active, locked, tempLocked, restricted, stolen, closed, physical, other] = await Promise.all([
      newCard(a),
      newCard(a),
      newCard(a),
      newCard(a),
      newCard(a),
      newCard(a),
      newCard(a, 'physical'),
      newCard(b),
    ]);
    f.card = {
      active: active.cardKey,
      locked: locked.cardKey,
      tempLocked: tempLocked.cardKey,
      restricted: restricted.cardKey,
      stolen: stolen.cardKey,
      closed: closed.cardKey,
      physical: physical.cardKey,
      other: other.cardKey,
    };

    const [tActive, tSuspended, tPending, tDeclined, tDeactivated, tNetwork, tLocked, tLockedPartner, tRestricted, tStolen, tOther] = await Promise.all([
      simulateTokenization(a, active.cardKey, { walletProvider: 'apple_pay' }, 'active'),
      simulateTokenization(a, active.cardKey, { walletProvider: 'google_pay', device: { type: 'watch', name: 'Pixel Watch', ipCountry: 'DE' } }, 'active'),
      simulateTokenization(a, active.cardKey, { walletProvider: 'samsung_pay', networkVerdict: 'require_verification' }, 'pending_verification'),
      simulateTokenization(a, active.cardKey, { walletProvider: 'merchant', networkVerdict: 'decline' }, 'declined'),
      simulateTokenization(a, active.cardKey, { walletProvider: 'apple_pay', device: { type: 'tablet' } }, 'active'),
      simulateTokenization(a, active.cardKey, { walletProvider: 'google_pay' }, 'active'),
      simulateTokenization(a, locked.cardKey, { walletProvider: 'apple_pay' }, 'active'),
      simulateTokenization(a, locked.cardKey, { walletProvider: 'google_pay' }, 'active'),
      simulateTokenization(a, restricted.cardKey, { walletProvider: 'apple_pay' }, 'active'),
      simulateTokenization(a, stolen.cardKey, { walletProvider: 'google_pay' }, 'active'),
      simulateTokenization(b, other.cardKey, { walletProvider: 'apple_pay' }, 'active'),
    ]);
    const requested = newTokenId();
    await pg.query(
      `INSERT INTO tokens (id, partner_id, card_key, individual_id, processor_ref, wallet_provider, token_requestor_id, last4, token_exp_date, device, status, history)
       SELECT $1, partner_id, card_key, individual_id, $2, 'merchant', '50100000001', '4821', '11/2029', '{"type":"other"}', 'requested', '[{"status":"requested","at":"2026-12-08T10:00:00.000Z","by":"network"}]'
         FROM cards WHERE card_key = $3`,
      [requested, `tref_${crypto.randomBytes(12).toString('hex')}`, active.cardKey]
    );
    f.token = {
      active: tActive,
      suspendedByPartner: tSuspended,
      pending: tPending,
      declined: tDeclined,
      deactivated: tDeactivated,
      suspendedByNetwork: tNetwork,
      requested,
      suspendedByCard: tLocked,
      suspendedByPartnerOnLocked: tLockedPartner,
      suspendedByRestriction: tRestricted,
      deactivatedByCard: tStolen,
      other: tOther,
    };

    expect((await ok(a, `/tokens/${tSuspended}/suspend`, { reason: 'phone in for repair' })).suspendedBy).to.equal('partner');
    expect((await ok(a, `/tokens/${tLockedPartner}/suspend`, {})).suspendedBy).to.equal('partner');
    expect((await ok(a, `/tokens/${tDeactivated}/deactivate`, {})).status).to.equal('deactivated');
    // The network suspends one on its own: the processor's notification brings it.
    const networkRef = (await pg.query<{ processor_ref: string }>('SELECT processor_ref FROM tokens WHERE id = $1', [tNetwork])).rows[0].processor_ref;
    const suspended = await sandboxControl(processing, 'POST', `/__sandbox/tokens/${networkRef}/network-status`, { status: 'suspended', reason: 'device_lost' });
    expect(suspended.status, JSON.stringify(suspended)).to.equal('suspended');
    await ok(a, `/cards/${locked.cardKey}/lock`, { expDate: locked.expDate });
    await ok(a, `/cards/${tempLocked.cardKey}/temporary-lock`, { expDate: tempLocked.expDate });
    await ok(a, `/cards/${restricted.cardKey}/restrict`, {});
    await ok(a, `/cards/${closed.cardKey}/restrict/closed`, {});
    await ok(a, `/cards/${stolen.cardKey}/restrict/stolen`, {});
    // Controls to keep: a refusal that replaced or cleared them would show in the snapshot.
    for (const path of [`/cards/${active.cardKey}/spend-controls`, '/spend-controls']) {
      const put = await api(gateway, a, 'PUT', path, { body: { blockedWalletProviders: ['samsung_pay'], maxAmountPerTransaction: 500 } });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
    }
    // The cascade converges (the lock's suspension, the theft's deactivation) before any snapshot.
    await waitFor('the cascade applied at the processor and in the gateway', converged);
    const states = await pg.query<{ id: string; status: string; suspended_by: string | null }>('SELECT id, status, suspended_by FROM tokens WHERE id = ANY($1)', [
      [tNetwork, tLocked, tLockedPartner, tRestricted, tStolen],
    ]);
    expect(Object.fromEntries(states.rows.map((r) => [r.id, [r.status, r.suspended_by]]))).to.deep.equal({
      [tNetwork]: ['suspended', null],
      [tLocked]: ['suspended', 'card_state'],
      [tLockedPartner]: ['suspended', 'partner'],
      [tRestricted]: ['suspended', 'card_state'],
      [tStolen]: ['deactivated', null],
    });
    console.log(`      fixture: ${Date.now() - started} ms`);
  });
  after(async function () {
    await pg?.end();
  });

  it('the snapshot sees a change: a real suspension changes the token, its history, the audit, the events and the processor', async function () {
    // The control of the table below: the same comparison, on a change the gateway makes.
    const card = await newCard(a);
    extraCards.push(card.cardKey);
    const token = await simulateTokenization(a, card.cardKey, { walletProvider: 'apple_pay' }, 'active');
    await waitFor('the new token converged', converged);
    const requestId = `bad-input-control-${crypto.randomBytes(6).toString('hex')}`;
    const before = await snapshot();
    const r = await send({ title: 'control', method: 'POST', path: () => `/tokens/${token}/suspend`, body: { reason: 'control' }, status: 200 }, requestId);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    await waitFor('the suspension converged', converged);
    const after = await snapshot();
    expect(after.db.tokens).to.not.deep.equal(before.db.tokens);
    // Its one token.updated, audit entries, the processor's token and the call.
    const added = after.db.events.slice(before.db.events.length);
    expect(added.map((e) => [e.type, JSON.parse(e.payload).data.token._id])).to.deep.equal([['token.updated', token]]);
    expect(added[0].request_id).to.equal(requestId);
    expect(after.audit.length).to.be.greaterThan(before.audit.length);
    expect(after.tokenUpdated[0].data.length).to.equal(before.tokenUpdated[0].data.length + added.length);
    expect(after.processor).to.not.deep.equal(before.processor);
    expect(newCalls(before, after, requestId).map((call) => (call as { path?: string }).path)).to.deep.equal([`/tokens/${after.db.tokens.find((t) => t.id === token)!.processor_ref}/suspend`]);
  });

  /**
   * The snapshot after the previous case: nothing runs between two cases, so it is the next case's
   * snapshot before (each case's comparison is then against the state the one before left).
   */
  let latest: Snapshot | undefined;

  for (const c of CASES) {
    it(`${c.status}${c.code ? ` ${c.code}` : ''}: ${c.title}`, async function () {
      const requestId = `bad-input-${crypto.randomBytes(8).toString('hex')}`;
      const before = latest ?? (await snapshot());
      const r = await send(c, requestId);
      const after = await snapshot();
      latest = after;
      const what = `${c.method} ${c.path(f)}: ${JSON.stringify(r.body).slice(0, 500)}`;
      expect(r.status, what).to.equal(c.status);
      if (c.status >= 400) {
        expect(r.contentType, what).to.match(/^application\/problem\+json/);
        expect(r.body.code, what).to.equal(c.code);
        expect(r.body.status, what).to.equal(c.status);
        if (c.param !== undefined) expect(r.body.invalidParams.map((p: { name: string }) => p.name), what).to.include(c.param);
        if (c.members !== undefined) expect(r.body, what).to.deep.include(c.members);
      } else {
        expect(r.contentType, what).to.match(/^application\/json/);
        expect(r.body.status, what).to.equal(c.tokenStatus);
      }
      expect(after.db, `${c.title}: the database`).to.deep.equal(before.db);
      expect(after.tokenUpdated, `${c.title}: GET /events?type=token.updated`).to.deep.equal(before.tokenUpdated);
      expect(after.processor, `${c.title}: the processor's tokens`).to.deep.equal(before.processor);
      expect(newCalls(before, after, requestId), `${c.title}: processor calls`).to.deep.equal([]);
      expect(after.audit.slice(0, before.audit.length), `${c.title}: the audit entries before`).to.deep.equal(before.audit);
      const added = after.audit.slice(before.audit.length).map((row) => ({ outcome: row.outcome, details: row.details, requestId: row.request_id }));
      if (c.audit === undefined) expect(added, `${c.title}: audit entries`).to.deep.equal([]);
      else {
        expect(added, `${c.title}: audit entries`).to.have.length(1);
        expect(added[0]).to.deep.include({ outcome: c.audit.outcome, requestId });
        expect(added[0].details).to.deep.include(c.audit.details);
      }
    });
  }
});
