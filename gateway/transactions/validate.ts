import { GatewayError } from '../errors';
import { TRANSACTION_ID } from '../ids';
import { TRANSACTION_STATUSES, TRANSACTION_STEP_KINDS, TRANSACTION_TYPES } from '../upstreams/partner-transaction';
import type { Transaction, TransactionStatus, TransactionStep, TransactionStepKind, TransactionType } from '../../contracts/upstreams';

/**
 * The one check of a transaction state the processing system sends, whichever way it comes (a
 * notification, the change feed, a simulation's answer): what the projection stores must fit its
 * columns and its rules, so that no state can fail to be written (and stop a retried notification or
 * the reconciler for good). Dates are RFC 3339 with a zone, stored and echoed as UTC ISO strings;
 * amounts at most 4 decimals (the column's scale); a history of at most {@link MAX_STEPS} steps
 * whose length is the version.
 */

/** Most steps one transaction's history may hold (a purchase has a handful). */
export const MAX_STEPS = 100;

/** An RFC 3339 date-time with its time zone (`Z` or `±hh:mm`), at most microseconds: what every date of the contract is. */
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

const STATUSES: readonly string[] = TRANSACTION_STATUSES;
const TYPES: readonly string[] = TRANSACTION_TYPES;
const STEP_KINDS: readonly string[] = TRANSACTION_STEP_KINDS;
/** A card key as the upstreams send it: 1 to 64 visible ASCII characters (the issuer's keys are a subset). */
export const UPSTREAM_CARD_KEY = /^[\x21-\x7e]{1,64}$/;

/** A GatewayError naming the invalid field (`validation_failed`). */
export function invalidField(name: string, reason: string): GatewayError {
  return new GatewayError('validation_failed', `The transaction is invalid: ${name} ${reason}`, { invalidParams: [{ name, reason }] });
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown, max: number): v is string => typeof v === 'string' && v.length >= 1 && v.length <= max;

/** An RFC 3339 instant as a UTC ISO string, or undefined when `v` is not one. */
export function instant(v: unknown): string | undefined {
  if (typeof v !== 'string' || !RFC3339.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function amount(v: unknown, name: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1e12 || Math.abs(Math.round(v * 1e4) - v * 1e4) > 1e-6) {
    throw invalidField(name, 'must be a non-negative number with at most 4 decimals');
  }
  return v;
}

function nullableString(v: unknown, name: string, pattern?: RegExp): string | null | undefined {
  if (v === undefined || v === null) return v;
  if (!isString(v, 100) || (pattern && !pattern.test(v))) throw invalidField(name, 'must be a string of at most 100 characters or null');
  return v;
}

function history(value: unknown, path: string): TransactionStep[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_STEPS) throw invalidField(`${path}.history`, `must be an array of 1 to ${MAX_STEPS} steps`);
  return value.map((step: unknown, i) => {
    const at = isObject(step) ? instant(step.at) : undefined;
    if (!isObject(step) || !STEP_KINDS.includes(step.kind as string) || at === undefined) {
      throw invalidField(`${path}.history.${i}`, `must be {kind: ${STEP_KINDS.join(' | ')}, amount, at (RFC 3339)}`);
    }
    return { kind: step.kind as TransactionStepKind, amount: amount(step.amount, `${path}.history.${i}.amount`), at };
  });
}

/** Checks a transaction state of the processing system (`path` names it in the error: `transaction`, the feed's item). */
export function checkTransaction(t: unknown, path = 'transaction'): Transaction {
  if (!isObject(t)) throw invalidField(path, 'must be an object');
  for (const name of ['id', 'cardId', 'type', 'status'] as const) if (!isString(t[name], 64)) throw invalidField(`${path}.${name}`, 'must be a string');
  if (!TRANSACTION_ID.test(t.id as string)) throw invalidField(`${path}.id`, 'must be 1 to 64 of A-Z a-z 0-9 _ -');
  if (!UPSTREAM_CARD_KEY.test(t.cardId as string)) throw invalidField(`${path}.cardId`, 'must be a card key');
  if (!(typeof t.currency === 'string' && /^[A-Z]{3}$/.test(t.currency))) throw invalidField(`${path}.currency`, 'must be an ISO 4217 code');
  if (!TYPES.includes(t.type as string)) throw invalidField(`${path}.type`, `must be one of ${TYPES.join(', ')}`);
  if (!STATUSES.includes(t.status as string)) throw invalidField(`${path}.status`, `must be one of ${STATUSES.join(', ')}`);
  const accountId = nullableString(t.accountId, `${path}.accountId`);
  const createdAt = instant(t.createdAt);
  if (createdAt === undefined) throw invalidField(`${path}.createdAt`, 'must be an RFC 3339 date-time');
  const updatedAt = t.updatedAt === undefined ? undefined : instant(t.updatedAt);
  if (t.updatedAt !== undefined && updatedAt === undefined) throw invalidField(`${path}.updatedAt`, 'must be an RFC 3339 date-time');
  if (t.version !== undefined && !(Number.isInteger(t.version) && (t.version as number) >= 1 && (t.version as number) <= MAX_STEPS)) {
    throw invalidField(`${path}.version`, `must be an integer from 1 to ${MAX_STEPS}`);
  }
  const steps = history(t.history, path);
  // A later version must bring its history: without it the steps in between could not be told.
  if (t.version !== undefined && (t.version as number) > 1 && steps === undefined) throw invalidField(`${path}.history`, 'is required with a version above 1');
  if (steps && t.version !== undefined && t.version !== steps.length) throw invalidField(`${path}.version`, 'must equal the number of history steps');
  const settledAmount = t.settledAmount === undefined || t.settledAmount === null ? t.settledAmount : amount(t.settledAmount, `${path}.settledAmount`);
  const m = t.merchant;
  if (!isObject(m) || !['name', 'mcc', 'city', 'country'].every((k) => typeof m[k] === 'string' && (m[k] as string).length <= 200)) {
    throw invalidField(`${path}.merchant`, 'must hold name, mcc, city and country');
  }
  const declineReason = nullableString(t.declineReason, `${path}.declineReason`);
  const relatedTransactionId = nullableString(t.relatedTransactionId, `${path}.relatedTransactionId`, TRANSACTION_ID);
  const authorizationId = nullableString(t.authorizationId, `${path}.authorizationId`);
  // The network token it was made with (docs/upstreams.md 10.8): the processor's reference, 1 to 100 visible ASCII, or null.
  const tokenReference = nullableString(t.tokenReference, `${path}.tokenReference`, /^[\x21-\x7e]{1,100}$/);
  const checked: Transaction = {
    id: t.id as string,
    cardId: t.cardId as string,
    accountId: accountId ?? null,
    amount: amount(t.amount, `${path}.amount`),
    currency: t.currency,
    type: t.type as TransactionType,
    status: t.status as TransactionStatus,
    merchant: { name: m.name as string, mcc: m.mcc as string, city: m.city as string, country: m.country as string },
    createdAt,
    ...(updatedAt === undefined ? {} : { updatedAt }),
    ...(t.version === undefined ? {} : { version: t.version as number }),
    ...(settledAmount === undefined ? {} : { settledAmount }),
    ...(declineReason === undefined ? {} : { declineReason }),
    ...(relatedTransactionId === undefined ? {} : { relatedTransactionId }),
    ...(authorizationId === undefined ? {} : { authorizationId }),
    ...(steps === undefined ? {} : { history: steps }),
  };
  // `Transaction.tokenReference` is part A's entry of contracts/upstreams.ts (issue 35): added through a widened type until it lands there.
  return tokenReference === undefined ? checked : Object.assign(checked, { tokenReference });
}
