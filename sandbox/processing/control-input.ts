import type { SimulatedAuthorization, SimulatedTransactionRequest } from '../../contracts/upstreams';
import { upstreamError, type SandboxError } from '../shared/sandbox-error';
import { roundMoney } from '../shared/seeded-random';
import type { NotifyMode } from './recorded';

/** A merchant as the control routes take it: every field optional (defaults: docs/upstreams.md, 6.9). */
export type MerchantInput = NonNullable<SimulatedAuthorization['merchant']>;

/** Body of `POST /__sandbox/transactions` (the one-step shortcut; contracts/upstreams.ts). */
export type RecordedTransactionInput = SimulatedTransactionRequest;

/** Body of `POST /__sandbox/authorizations` (contracts/upstreams.ts). */
export type AuthorizationInput = SimulatedAuthorization;

/** Body of a later step (`clearing`, `reversal`, `refund`; `expiry` takes no amount). */
export interface StepInput {
  amount?: number;
  notify?: NotifyMode;
}

const NOTIFY_MODES: readonly NotifyMode[] = ['deliver', 'drop', 'hold'];
const AUTHORIZATION_ID = /^[\x21-\x7e]{1,64}$/;
const CURRENCY = /^[A-Z]{3}$/;

function bad(path: string, message: string): SandboxError {
  return upstreamError('VALIDATION_ERROR', `Invalid request: ${path} ${message}`, [{ path, message }]);
}

/** The body as an object (none is `{}`); with `allowed`, any other field is refused. */
function objectBody(body: unknown, allowed?: readonly string[]): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('/', 'must be an object');
  const b = body as Record<string, unknown>;
  if (allowed) for (const name of Object.keys(b)) if (!allowed.includes(name)) throw bad(`/${name}`, 'is not allowed');
  return b;
}

/** A money amount: a positive number, rounded to cents (roundMoney); what rounds to 0 is refused. */
function amountOf(value: unknown, path = '/amount'): number {
  const amount = typeof value === 'number' && Number.isFinite(value) ? roundMoney(value) : NaN;
  if (!(amount > 0)) throw bad(path, 'must be a positive number (rounded to cents, at least 0.01)');
  return amount;
}

function checkNotify(value: unknown): void {
  if (value !== undefined && !NOTIFY_MODES.includes(value as NotifyMode)) throw bad('/notify', 'must be deliver, drop or hold');
}

function checkMerchant(value: unknown, strict: boolean): void {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('/merchant', 'must be an object');
  for (const [name, field] of Object.entries(value)) {
    if (strict && !['name', 'mcc', 'city', 'country'].includes(name)) throw bad(`/merchant/${name}`, 'is not allowed');
    if (typeof field !== 'string' || (strict && (field.length === 0 || field.length > 100))) throw bad(strict ? `/merchant/${name}` : '/merchant', strict ? 'must be a string of 1 to 100 characters' : 'must hold strings');
  }
}

/** `POST /__sandbox/transactions`: lenient (other fields are ignored), plus `notify`. */
export function checkRecordedTransaction(body: unknown): RecordedTransactionInput {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b.cardId !== 'string' || b.cardId.length === 0) throw bad('/cardId', 'is required');
  const amount = amountOf(b.amount);
  if (typeof b.currency !== 'string' || !CURRENCY.test(b.currency)) throw bad('/currency', 'must be an ISO 4217 code');
  if (b.type !== undefined && !['authorization', 'clearing', 'decline'].includes(b.type as string)) throw bad('/type', 'must be authorization, clearing or decline');
  checkMerchant(b.merchant, false);
  if (b.declineReason !== undefined && typeof b.declineReason !== 'string') throw bad('/declineReason', 'must be a string');
  checkNotify(b.notify);
  return { ...(b as unknown as RecordedTransactionInput), amount };
}

/** `POST /__sandbox/authorizations`. */
export function checkAuthorization(body: unknown): AuthorizationInput {
  const b = objectBody(body, ['cardId', 'tokenReference', 'amount', 'currency', 'type', 'merchant', 'authorizationId', 'notify']);
  // A purchase with the card itself names the card; one with a token (docs/upstreams.md 10.8) names the token instead.
  if (b.tokenReference !== undefined) {
    if (typeof b.tokenReference !== 'string' || !/^[\x21-\x7e]{1,100}$/.test(b.tokenReference)) throw bad('/tokenReference', 'must be 1 to 100 visible ASCII characters');
    if (b.cardId !== undefined) throw bad('/cardId', 'is not allowed with tokenReference (the token names its card)');
  } else if (typeof b.cardId !== 'string' || b.cardId.length === 0 || b.cardId.length > 64) throw bad('/cardId', 'is required: a string of 1 to 64 characters');
  const amount = amountOf(b.amount);
  if (b.currency !== undefined && (typeof b.currency !== 'string' || !CURRENCY.test(b.currency))) throw bad('/currency', 'must be an ISO 4217 code');
  if (b.type !== undefined && b.type !== 'PURCHASE' && b.type !== 'WITHDRAWAL') throw bad('/type', 'must be PURCHASE or WITHDRAWAL');
  checkMerchant(b.merchant, true);
  if (b.authorizationId !== undefined && (typeof b.authorizationId !== 'string' || !AUTHORIZATION_ID.test(b.authorizationId))) {
    throw bad('/authorizationId', 'must be 1 to 64 visible ASCII characters');
  }
  checkNotify(b.notify);
  return { ...(b as unknown as AuthorizationInput), amount };
}

/** A later step's body: `{amount?, notify?}` (`withAmount` false: `{notify?}` only). */
export function checkStep(body: unknown, withAmount = true): StepInput {
  const b = objectBody(body, withAmount ? ['amount', 'notify'] : ['notify']);
  checkNotify(b.notify);
  return { amount: b.amount === undefined ? undefined : amountOf(b.amount), notify: b.notify as NotifyMode | undefined };
}

/** `POST /__sandbox/transactions/{id}/notifications/release`: `{order?}`. */
export function checkRelease(body: unknown): 'oldest-first' | 'newest-first' {
  const b = objectBody(body, ['order']);
  if (b.order !== undefined && b.order !== 'oldest-first' && b.order !== 'newest-first') throw bad('/order', 'must be oldest-first or newest-first');
  return (b.order as 'oldest-first' | 'newest-first' | undefined) ?? 'oldest-first';
}

/** `POST /__sandbox/transactions/{id}/notifications/resend`: no body, or an empty object. */
export function checkResend(body: unknown): void {
  objectBody(body, []);
}
