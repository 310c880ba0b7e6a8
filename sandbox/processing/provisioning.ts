import crypto from 'node:crypto';
import type {
  ApplePayProvisioningRequest,
  ApplePayProvisioningResult,
  GooglePayProvisioningRequest,
  GooglePayProvisioningResult,
} from '../../contracts/upstreams';
import { upstreamError, type ErrorDetail } from '../shared/sandbox-error';
import { seededRandom } from '../shared/seeded-random';
import type { KnownCard } from './transactions';

/*
 * Push provisioning (docs/upstreams.md 10.2). The payloads are random bytes of the encodings and
 * sizes a real processor's have: they are NOT wallet cryptograms, no wallet, network or device can
 * decrypt or use them. Nothing here is logged or kept: the answer is made, sent and forgotten.
 */

/** Size of Apple's `activationData` in bytes. */
export const ACTIVATION_DATA_BYTES = 64;
/** Size range of Apple's `encryptedPassData` in bytes. */
export const ENCRYPTED_PASS_DATA_BYTES = { min: 1024, max: 2048 } as const;
/** Size of Apple's `ephemeralPublicKey`: an uncompressed EC P-256 point (`0x04`, then X and Y). */
export const EPHEMERAL_PUBLIC_KEY_BYTES = 65;
/** Size range of Google's `opaquePaymentCard` in bytes. */
export const OPAQUE_PAYMENT_CARD_BYTES = { min: 1024, max: 2048 } as const;

/** The card's network and product as Google Pay shows them (the sandbox's BIN `535570` is Mastercard). */
export const SANDBOX_CARD_NETWORK = { network: 'MASTERCARD', tokenServiceProvider: 'TOKEN_PROVIDER_MASTERCARD', displayName: 'Partner Card' } as const;

const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const VISIBLE_ASCII = /^[\x21-\x7e]{1,64}$/;

/** Bytes `text` decodes to when it is standard base64 (padded), else undefined. */
export function base64Bytes(text: string): number | undefined {
  if (text.length === 0 || text.length % 4 !== 0 || !STANDARD_BASE64.test(text)) return undefined;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

/** A 400 `VALIDATION_ERROR` listing every problem. */
function refuse(details: ErrorDetail[]): never {
  throw upstreamError('VALIDATION_ERROR', `Invalid request: ${details[0].path} ${details[0].message}`, details);
}

/** The body as an object with only the `allowed` members; problems are added to `details`. */
function objectOf(body: unknown, allowed: readonly string[], details: ErrorDetail[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) refuse([{ path: '/', message: 'must be an object' }]);
  const b = body as Record<string, unknown>;
  for (const name of Object.keys(b)) if (!allowed.includes(name)) details.push({ path: `/${name}`, message: 'is not allowed' });
  return b;
}

function checkCardKey(b: Record<string, unknown>, details: ErrorDetail[]): void {
  if (typeof b.cardKey !== 'string' || b.cardKey.length === 0 || b.cardKey.length > 64) details.push({ path: '/cardKey', message: 'is required: a string of 1 to 64 characters' });
}

function checkBase64Bytes(value: unknown, path: string, min: number, max: number, details: ErrorDetail[]): void {
  const bytes = typeof value === 'string' ? base64Bytes(value) : undefined;
  if (bytes === undefined || bytes < min || bytes > max) details.push({ path, message: `is required: standard base64 of ${min} to ${max} bytes` });
}

/** The card a provisioning body names, when it names one as a string (404 comes before 400: 10.2's order). */
export function cardKeyNamed(body: unknown): string | undefined {
  const cardKey = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).cardKey : undefined;
  return typeof cardKey === 'string' && cardKey.length > 0 && cardKey.length <= 64 ? cardKey : undefined;
}

/** `POST /tokens/provisioning/apple-pay`'s body (10.2), or a 400 naming every problem. */
export function checkApplePayProvisioning(body: unknown): ApplePayProvisioningRequest {
  const details: ErrorDetail[] = [];
  const b = objectOf(body, ['cardKey', 'certificates', 'nonce', 'nonceSignature'], details);
  checkCardKey(b, details);
  if (!Array.isArray(b.certificates) || b.certificates.length < 1 || b.certificates.length > 3) {
    details.push({ path: '/certificates', message: 'is required: an array of 1 to 3 certificates' });
  } else {
    b.certificates.forEach((certificate: unknown, i) => {
      if (typeof certificate !== 'string' || certificate.length < 100 || certificate.length > 4096 || base64Bytes(certificate) === undefined) {
        details.push({ path: `/certificates/${i}`, message: 'must be standard base64 of 100 to 4096 characters' });
      }
    });
  }
  checkBase64Bytes(b.nonce, '/nonce', 4, 64, details);
  checkBase64Bytes(b.nonceSignature, '/nonceSignature', 16, 512, details);
  if (details.length > 0) refuse(details);
  return b as unknown as ApplePayProvisioningRequest;
}

/** `POST /tokens/provisioning/google-pay`'s body (10.2), or a 400 naming every problem. */
export function checkGooglePayProvisioning(body: unknown): GooglePayProvisioningRequest {
  const details: ErrorDetail[] = [];
  const b = objectOf(body, ['cardKey', 'walletAccountId', 'deviceId'], details);
  checkCardKey(b, details);
  for (const name of ['walletAccountId', 'deviceId'] as const) {
    if (typeof b[name] !== 'string' || !VISIBLE_ASCII.test(b[name])) details.push({ path: `/${name}`, message: 'is required: 1 to 64 visible ASCII characters' });
  }
  if (details.length > 0) refuse(details);
  return b as unknown as GooglePayProvisioningRequest;
}

/**
 * 409 `CARD_NOT_TOKENIZABLE` for a card the processor itself refuses to provision: in the sandbox,
 * one whose last status update (6.5) is `S4` (closed at the network).
 */
export function checkTokenizable(card: KnownCard, lastStatusCode: string | undefined): void {
  if (lastStatusCode === 'S4') throw upstreamError('CARD_NOT_TOKENIZABLE', `Card ${card.cardKey} is closed at the network: it cannot be tokenized`);
}

function randomSize(range: { min: number; max: number }): number {
  return crypto.randomInt(range.min, range.max + 1);
}

/** Apple Pay's payload: random bytes of the right sizes, standard base64 (never a real cryptogram). */
export function applePayPayload(): ApplePayProvisioningResult {
  return {
    activationData: crypto.randomBytes(ACTIVATION_DATA_BYTES).toString('base64'),
    encryptedPassData: crypto.randomBytes(randomSize(ENCRYPTED_PASS_DATA_BYTES)).toString('base64'),
    ephemeralPublicKey: Buffer.concat([Buffer.from([0x04]), crypto.randomBytes(EPHEMERAL_PUBLIC_KEY_BYTES - 1)]).toString('base64'),
  };
}

/**
 * The card's last four digits: from its mask when the processor knows it, else drawn from its key
 * (a card registered through the control route without a mask).
 */
export function cardLastDigits(card: KnownCard): string {
  const digits = (card.cardMask ?? '').replace(/[^0-9]/g, '');
  if (card.cardMask !== null && digits.length >= 4) return digits.slice(-4);
  const random = seededRandom(`last-digits:${card.cardKey}`);
  let out = '';
  for (let i = 0; i < 4; i += 1) out += String(random.int(0, 9));
  return out;
}

/** Google Pay's payload: `opaquePaymentCard` random bytes, base64url (never a real cryptogram), and what the wallet shows. */
export function googlePayPayload(card: KnownCard): GooglePayProvisioningResult {
  return {
    opaquePaymentCard: crypto.randomBytes(randomSize(OPAQUE_PAYMENT_CARD_BYTES)).toString('base64url'),
    ...SANDBOX_CARD_NETWORK,
    lastDigits: cardLastDigits(card),
  };
}
