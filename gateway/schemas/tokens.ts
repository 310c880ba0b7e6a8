import { SIGNED_CURSOR_PATTERN } from '../db/signed-cursor';
import { CARD_KEY } from '../ids';
import { TOKEN_DEVICE_TYPES, TOKEN_STATUSES, WALLET_PROVIDERS } from '../shapes/token';
import { COUNTRY, type JsonSchema } from './common';

/** The request schemas of the network-token routes (docs/tokens.md, "Bodies"). */

const id = (name: string) => `https://partner-gateway.dev/schemas/${name}.json`;
/** The network's risk verdict a simulated tokenization plays. */
export const NETWORK_VERDICTS = ['approve', 'require_verification', 'decline'] as const;


/** 1 to 64 visible ASCII characters (the Google Pay SDK's ids). */
const VISIBLE_ASCII_64 = { type: 'string', pattern: '^[\\x21-\\x7e]{1,64}$' } as const;

/**
 * Standard base64 (with its padding) of a DER certificate, 100 to 4,096 characters. The byte-exact
 * patterns below spell out each remainder of the length: n bytes are n/3 groups of four characters,
 * then `xx==` (one byte more) or `xxx=` (two more).
 */
const CERTIFICATE = {
  type: 'string',
  minLength: 100,
  maxLength: 4096,
  // The length in the pattern too (24 to 1,023 groups and a last one: 100 to 4,096 characters), so a
  // generator of matching strings (the fuzz) makes them of that length rather than filtering for it.
  pattern: '^(?:[A-Za-z0-9+/]{4}){24,1023}(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)$',
  description: 'Standard base64 of a DER X.509 certificate, 100 to 4,096 characters',
} as const;

/** Body of `POST /cards/{id}/wallet-provisioning/apple-pay`: PassKit's inputs, passed on to the processor, never stored or logged. */
export const walletProvisioningApplePay = {
  $id: id('wallet-provisioning-apple-pay'),
  type: 'object',
  additionalProperties: false,
  required: ['certificates', 'nonce', 'nonceSignature'],
  properties: {
    certificates: { type: 'array', minItems: 1, maxItems: 3, items: CERTIFICATE, description: "Apple's leaf and sub-CA certificates, leaf first, as PassKit gives them" },
    nonce: {
      type: 'string',
      pattern: '^(?:(?:[A-Za-z0-9+/]{4}){2,21}|(?:[A-Za-z0-9+/]{4}){1,21}[A-Za-z0-9+/]{2}==|(?:[A-Za-z0-9+/]{4}){1,20}[A-Za-z0-9+/]{3}=)$',
      description: "Standard base64 of 4 to 64 bytes: Apple's one-time nonce",
    },
    nonceSignature: {
      type: 'string',
      pattern: '^(?:(?:[A-Za-z0-9+/]{4}){6,170}|(?:[A-Za-z0-9+/]{4}){5,170}[A-Za-z0-9+/]{2}==|(?:[A-Za-z0-9+/]{4}){5,170}[A-Za-z0-9+/]{3}=)$',
      description: "Standard base64 of 16 to 512 bytes: the device's signature over the nonce",
    },
  },
} as const satisfies JsonSchema;

/** Body of `POST /cards/{id}/wallet-provisioning/google-pay`: the Google Pay SDK's ids, passed on, never stored or logged. */
export const walletProvisioningGooglePay = {
  $id: id('wallet-provisioning-google-pay'),
  type: 'object',
  additionalProperties: false,
  required: ['walletAccountId', 'deviceId'],
  properties: {
    walletAccountId: { ...VISIBLE_ASCII_64, description: 'The client wallet account id the Google Pay SDK gives your app, 1 to 64 visible ASCII characters' },
    deviceId: { ...VISIBLE_ASCII_64, description: 'The stable hardware id the Google Pay SDK gives, 1 to 64 visible ASCII characters' },
  },
} as const satisfies JsonSchema;

/** Body of `POST /tokens/{id}/suspend` | `resume` | `deactivate`. */
export const tokenChange = {
  $id: id('token-change'),
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: 'string', minLength: 1, maxLength: 200, description: "Why: kept in the token's history" } },
} as const satisfies JsonSchema;

/** Query of `GET /tokens` (docs/tokens.md, "Reading tokens"). */
export const tokensSearchQuery = {
  $id: id('tokens-search-query'),
  type: 'object',
  additionalProperties: false,
  properties: {
    cardKey: { type: 'string', pattern: CARD_KEY.source, description: "Only this card's tokens (a card that is not yours matches nothing)" },
    status: { type: 'string', enum: TOKEN_STATUSES, description: 'Only tokens in this status' },
    walletProvider: { type: 'string', enum: WALLET_PROVIDERS, description: 'Only tokens of this wallet (or `merchant`)' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100' },
    cursor: { type: 'string', pattern: SIGNED_CURSOR_PATTERN, description: 'The `nextCursor` of the previous page, with the same filters' },
  },
} as const satisfies JsonSchema;

/** The device of a simulated tokenization. */
const DEVICE = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { type: 'string', enum: TOKEN_DEVICE_TYPES },
    name: { type: 'string', minLength: 1, maxLength: 64 },
    ipCountry: { ...COUNTRY, description: 'ISO 3166-1 alpha-2' },
  },
} as const;

/** Sandbox mode only: a wallet or a merchant asks to tokenize the card (docs/tokens.md, "Sandbox simulations"). */
export const simulateTokenization = {
  $id: id('simulate-tokenization'),
  type: 'object',
  additionalProperties: false,
  required: ['walletProvider'],
  properties: {
    walletProvider: { type: 'string', enum: WALLET_PROVIDERS },
    device: { ...DEVICE, description: 'What the wallet says about the device; the sandbox\'s default when left out' },
    networkVerdict: { type: 'string', enum: NETWORK_VERDICTS, description: "The network's risk verdict: approve (the default), require_verification or decline" },
    tokenizationId: { type: 'string', pattern: '^[\\x21-\\x7e]{1,100}$', description: "The processor's tokenization id; the same again plays the processor's retry (the same token, nothing new)" },
  },
} as const satisfies JsonSchema;

/** Sandbox mode only: the cardholder types the code into the wallet. */
export const simulateTokenVerification = {
  $id: id('simulate-token-verification'),
  type: 'object',
  additionalProperties: false,
  required: ['code'],
  properties: { code: { type: 'string', minLength: 1, maxLength: 64, description: 'What the cardholder typed' } },
} as const satisfies JsonSchema;
