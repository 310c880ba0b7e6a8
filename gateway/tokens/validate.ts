import { GatewayError } from '../errors';
import { TOKEN_CHANGES, TOKEN_DEVICE_TYPES, TOKEN_STATUSES, WALLET_PROVIDERS, type TokenDevice, type TokenStatus, type WalletProvider } from '../shapes/token';
import { instant, isObject, UPSTREAM_CARD_KEY } from '../transactions/validate';
import { containsCardNumber, identifierIsCardNumber } from '../upstreams/card-data';
import type { NetworkVerdict, TokenizationRequest, TokenNotification, UpstreamToken, UpstreamTokenChange, VerificationRequest } from './contract-stub';

/**
 * The one check of what the processor sends about tokens (docs/upstreams.md section 10), whichever
 * way it comes (a notification, the change feed, an operation's answer, a tokenization or
 * verification request): what is stored must fit `tokens`' columns and checks, so that no state can
 * fail to be written (and stop a retried notification or the reconciler for good); a message
 * carrying a card number anywhere is refused (the card-data walker, docs/cards.md).
 */

function invalid(name: string, reason: string): GatewayError {
  return new GatewayError('validation_failed', `The token message is invalid: ${name} ${reason}`, { invalidParams: [{ name, reason }] });
}

const isString = (v: unknown, max: number): v is string => typeof v === 'string' && v.length >= 1 && v.length <= max;
/**
 * 1 to `max` visible ASCII characters: the processor's ids, never a card number by itself (the
 * card-data walker's identifier rule: opaque hexadecimal ids hold Luhn-valid digit runs by chance,
 * so only an id that is a card number is refused). Every other member is shaped tightly (4 digits,
 * 11 digits, MM/YYYY, an enum) or checked as free text (the device's name).
 */
const visible = (v: unknown, max: number): v is string => isString(v, max) && /^[\x21-\x7e]+$/.test(v) && !identifierIsCardNumber(v);
const TOKEN_REFERENCE = /^[\x21-\x7e]{1,100}$/;
const VERDICT_REASON = /^[A-Z0-9_]{1,40}$/;

/** A device as 10.1 describes it. */
export function checkDevice(v: unknown, path: string): TokenDevice {
  if (!isObject(v)) throw invalid(path, 'must be an object');
  for (const key of Object.keys(v)) if (!['type', 'name', 'ipCountry'].includes(key)) throw invalid(`${path}.${key}`, 'is not a device member');
  if (!(TOKEN_DEVICE_TYPES as readonly unknown[]).includes(v.type)) throw invalid(`${path}.type`, `must be one of ${TOKEN_DEVICE_TYPES.join(', ')}`);
  if (v.name !== undefined && !isString(v.name, 64)) throw invalid(`${path}.name`, 'must be 1 to 64 characters');
  if (typeof v.name === 'string' && containsCardNumber(v.name)) throw invalid(`${path}.name`, 'holds a card number');
  if (v.ipCountry !== undefined && !(typeof v.ipCountry === 'string' && /^[A-Z]{2}$/.test(v.ipCountry))) throw invalid(`${path}.ipCountry`, 'must be ISO 3166-1 alpha-2');
  return { type: v.type as TokenDevice['type'], ...(v.name === undefined ? {} : { name: v.name as string }), ...(v.ipCountry === undefined ? {} : { ipCountry: v.ipCountry as string }) };
}

/** The token parts shared by 10.1 and 10.3: wallet, requestor, last4, expiry, device. */
function checkTokenFace(v: Record<string, unknown>, path: string): Pick<UpstreamToken, 'walletProvider' | 'tokenRequestorId' | 'last4' | 'tokenExpDate' | 'device'> {
  if (!(WALLET_PROVIDERS as readonly unknown[]).includes(v.walletProvider)) throw invalid(`${path}.walletProvider`, `must be one of ${WALLET_PROVIDERS.join(', ')}`);
  if (!(typeof v.tokenRequestorId === 'string' && /^[0-9]{11}$/.test(v.tokenRequestorId))) throw invalid(`${path}.tokenRequestorId`, 'must be 11 digits');
  if (!(typeof v.last4 === 'string' && /^[0-9]{4}$/.test(v.last4))) throw invalid(`${path}.last4`, 'must be 4 digits');
  if (!(typeof v.tokenExpDate === 'string' && /^(0[1-9]|1[0-2])\/[0-9]{4}$/.test(v.tokenExpDate))) throw invalid(`${path}.tokenExpDate`, 'must be MM/YYYY');
  return {
    walletProvider: v.walletProvider as WalletProvider,
    tokenRequestorId: v.tokenRequestorId,
    last4: v.last4,
    tokenExpDate: v.tokenExpDate,
    device: checkDevice(v.device, `${path}.device`),
  };
}

/** The processor's Token (10.1); other members are ignored. */
export function checkUpstreamToken(v: unknown, path = 'token'): UpstreamToken {
  if (!isObject(v)) throw invalid(path, 'must be an object');
  if (!visible(v.tokenReference, 100) || !TOKEN_REFERENCE.test(v.tokenReference)) throw invalid(`${path}.tokenReference`, 'must be 1 to 100 visible ASCII characters');
  if (!isString(v.cardKey, 64) || !UPSTREAM_CARD_KEY.test(v.cardKey)) throw invalid(`${path}.cardKey`, 'must be a card key');
  if (v.tokenizationId !== null && v.tokenizationId !== undefined && !visible(v.tokenizationId, 100)) throw invalid(`${path}.tokenizationId`, 'must be 1 to 100 visible ASCII characters or null');
  if (!(TOKEN_STATUSES as readonly unknown[]).includes(v.status)) throw invalid(`${path}.status`, `must be one of ${TOKEN_STATUSES.join(', ')}`);
  if (!(Number.isInteger(v.version) && (v.version as number) >= 1 && (v.version as number) <= 2_147_483_647)) throw invalid(`${path}.version`, 'must be an integer from 1');
  const createdAt = instant(v.createdAt);
  if (createdAt === undefined) throw invalid(`${path}.createdAt`, 'must be an RFC 3339 date-time');
  const updatedAt = instant(v.updatedAt);
  if (updatedAt === undefined) throw invalid(`${path}.updatedAt`, 'must be an RFC 3339 date-time');
  return {
    tokenReference: v.tokenReference,
    cardKey: v.cardKey,
    tokenizationId: (v.tokenizationId as string | null | undefined) ?? null,
    ...checkTokenFace(v, path),
    status: v.status as TokenStatus,
    version: v.version as number,
    createdAt,
    updatedAt,
  };
}

/** A token lifecycle notification's body (10.5), its id and occurredAt checked already. */
export function checkTokenNotification(body: Record<string, unknown>): TokenNotification {
  if (body.type !== 'token.created' && body.type !== 'token.updated') throw invalid('type', 'must be token.created or token.updated');
  const head = { id: body.id as string, occurredAt: body.occurredAt as string };
  if (body.type === 'token.created') return { ...head, type: 'token.created', token: checkUpstreamToken(body.token) };
  // A later change names what changed, and may say why.
  if (!(TOKEN_CHANGES as readonly unknown[]).includes(body.change)) throw invalid('change', `must be one of ${TOKEN_CHANGES.join(', ')}`);
  if (body.reason !== undefined && body.reason !== null && !isString(body.reason, 200)) throw invalid('reason', 'must be a string of at most 200 characters');
  return {
    ...head,
    type: 'token.updated',
    change: body.change as UpstreamTokenChange,
    ...(typeof body.reason === 'string' ? { reason: body.reason } : {}),
    token: checkUpstreamToken(body.token),
  };
}

function checkVerdict(v: unknown, path: string): NetworkVerdict {
  if (!isObject(v)) throw invalid(path, 'must be an object');
  if (!['approve', 'require_verification', 'decline'].includes(v.decision as string)) throw invalid(`${path}.decision`, 'must be approve, require_verification or decline');
  if (v.riskScore !== undefined && !(Number.isInteger(v.riskScore) && (v.riskScore as number) >= 1 && (v.riskScore as number) <= 5)) throw invalid(`${path}.riskScore`, 'must be an integer from 1 to 5');
  if (v.reasons !== undefined && !(Array.isArray(v.reasons) && v.reasons.length <= 10 && v.reasons.every((r) => typeof r === 'string' && VERDICT_REASON.test(r)))) {
    throw invalid(`${path}.reasons`, 'must be up to 10 codes of 1 to 40 of A-Z 0-9 _');
  }
  return {
    decision: v.decision as NetworkVerdict['decision'],
    ...(v.riskScore === undefined ? {} : { riskScore: v.riskScore as number }),
    ...(v.reasons === undefined ? {} : { reasons: v.reasons as string[] }),
  };
}

/** The tokenization request's body (10.3), its id and occurredAt checked already. */
export function checkTokenizationRequest(body: Record<string, unknown>): TokenizationRequest {
  if (body.type !== 'tokenization.request') throw invalid('type', 'must be tokenization.request');
  const t = body.tokenization;
  if (!isObject(t)) throw invalid('tokenization', 'must be an object');
  if (t.id !== body.id) throw invalid('tokenization.id', 'must equal the body id');
  if (!visible(t.tokenReference, 100)) throw invalid('tokenization.tokenReference', 'must be 1 to 100 visible ASCII characters');
  if (!isString(t.cardId, 64) || !UPSTREAM_CARD_KEY.test(t.cardId)) throw invalid('tokenization.cardId', 'must be a card key');
  const at = instant(t.at);
  if (at === undefined) throw invalid('tokenization.at', 'must be an RFC 3339 date-time');
  return {
    id: t.id as string,
    tokenReference: t.tokenReference,
    cardId: t.cardId,
    ...checkTokenFace(t, 'tokenization'),
    networkVerdict: checkVerdict(t.networkVerdict, 'tokenization.networkVerdict'),
    at,
  };
}

/**
 * The verification request's body (10.4), its id and occurredAt checked already. The code is
 * checked for its type and length only: any other string is a wrong code, an attempt, not a 400.
 */
export function checkVerificationRequest(body: Record<string, unknown>): VerificationRequest {
  if (body.type !== 'tokenization.verification') throw invalid('type', 'must be tokenization.verification');
  const v = body.verification;
  if (!isObject(v)) throw invalid('verification', 'must be an object');
  if (v.id !== body.id) throw invalid('verification.id', 'must equal the body id');
  if (!visible(v.tokenReference, 100)) throw invalid('verification.tokenReference', 'must be 1 to 100 visible ASCII characters');
  if (!isString(v.code, 64)) throw invalid('verification.code', 'must be a string of 1 to 64 characters');
  return { id: v.id as string, tokenReference: v.tokenReference, code: v.code };
}
