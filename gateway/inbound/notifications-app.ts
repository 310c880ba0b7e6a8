import express, { type RequestHandler } from 'express';
import type { SyncDeps } from '../cards/card-sync';
import { GatewayError } from '../errors';
import { notFound, problemHandler } from '../http/problem';
import { requestContext } from '../http/request-context';
import { verifySignature } from '../webhooks/signature';
import type { NotifySecrets } from './secrets';
import { TRANSACTION_ID } from '../ids';
import { TRANSACTION_STATUSES, TRANSACTION_STEP_KINDS, TRANSACTION_TYPES } from '../upstreams/partner-transaction';
import type { Transaction, TransactionStatus, TransactionStep, TransactionStepKind, TransactionType } from '../upstreams/types';
import { applyIssuerNotification, applyProcessingNotification, type IssuerNotification, type NotifyingUpstream, type ProcessingNotification } from './apply';

/** How far a notification's `t` may be from the gateway's clock, in seconds (either way). */
export const NOTIFICATION_TOLERANCE_SECONDS = 300;


const ID = /^[\x21-\x7e]{1,100}$/;
const CARD_KEY = /^[\x21-\x7e]{1,64}$/;
const STATUS_CODE = /^[0-9A-Z]{2}$/;

function invalid(name: string, reason: string): GatewayError {
  return new GatewayError('validation_failed', `The notification is invalid: ${name} ${reason}`, { invalidParams: [{ name, reason }] });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown, max = 200): v is string => typeof v === 'string' && v.length >= 1 && v.length <= max;
const isInstant = (v: unknown): v is string => isString(v, 40) && !Number.isNaN(Date.parse(v));

function checkIssuer(body: Record<string, unknown>): IssuerNotification {
  if (body.type !== 'card.status_changed') throw invalid('type', 'must be card.status_changed');
  if (!isString(body.cardKey) || !CARD_KEY.test(body.cardKey)) throw invalid('cardKey', 'must be a card key');
  if (!isString(body.statusCode) || !STATUS_CODE.test(body.statusCode)) throw invalid('statusCode', 'must be an issuer status code');
  if (body.previousStatusCode !== null && body.previousStatusCode !== undefined && !(isString(body.previousStatusCode) && STATUS_CODE.test(body.previousStatusCode))) {
    throw invalid('previousStatusCode', 'must be an issuer status code or null');
  }
  if (body.reason !== null && body.reason !== undefined && !isString(body.reason, 500)) throw invalid('reason', 'must be a string of at most 500 characters or null');
  return {
    id: body.id as string,
    type: 'card.status_changed',
    occurredAt: body.occurredAt as string,
    cardKey: body.cardKey,
    previousStatusCode: (body.previousStatusCode as string | null | undefined) ?? null,
    statusCode: body.statusCode,
    reason: (body.reason as string | null | undefined) ?? null,
  };
}

const STATUSES: readonly string[] = TRANSACTION_STATUSES;
const TYPES: readonly string[] = TRANSACTION_TYPES;
const STEP_KINDS: readonly string[] = TRANSACTION_STEP_KINDS;
/** Most steps one transaction's history may hold (a purchase has a handful). */
const MAX_STEPS = 100;
const isAmount = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1e12;
const isOptionalString = (v: unknown, max = 100) => v === null || v === undefined || isString(v, max);

function checkHistory(value: unknown): TransactionStep[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_STEPS) throw invalid('transaction.history', `must be an array of 1 to ${MAX_STEPS} steps`);
  return value.map((step: unknown, i) => {
    if (!isObject(step) || !STEP_KINDS.includes(step.kind as string) || !isAmount(step.amount) || !isInstant(step.at)) {
      throw invalid(`transaction.history.${i}`, `must be {kind: ${STEP_KINDS.join(' | ')}, amount, at}`);
    }
    return { kind: step.kind as TransactionStepKind, amount: step.amount, at: step.at };
  });
}

function checkProcessing(body: Record<string, unknown>): ProcessingNotification {
  if (body.type !== 'transaction.created' && body.type !== 'transaction.updated') throw invalid('type', 'must be transaction.created or transaction.updated');
  const t = body.transaction;
  if (!isObject(t)) throw invalid('transaction', 'must be an object');
  for (const name of ['id', 'cardId', 'currency', 'type', 'status'] as const) if (!isString(t[name], 100)) throw invalid(`transaction.${name}`, 'must be a string');
  if (!TRANSACTION_ID.test(t.id as string)) throw invalid('transaction.id', 'must be 1 to 64 of A-Z a-z 0-9 _ -');
  if (!TYPES.includes(t.type as string)) throw invalid('transaction.type', `must be one of ${TYPES.join(', ')}`);
  if (!STATUSES.includes(t.status as string)) throw invalid('transaction.status', `must be one of ${STATUSES.join(', ')}`);
  if (!isOptionalString(t.accountId)) throw invalid('transaction.accountId', 'must be a string or null');
  if (!isAmount(t.amount)) throw invalid('transaction.amount', 'must be a non-negative number');
  if (!isInstant(t.createdAt)) throw invalid('transaction.createdAt', 'must be a date-time');
  if (t.updatedAt !== undefined && !isInstant(t.updatedAt)) throw invalid('transaction.updatedAt', 'must be a date-time');
  if (t.version !== undefined && !(Number.isInteger(t.version) && (t.version as number) >= 1 && (t.version as number) <= MAX_STEPS)) {
    throw invalid('transaction.version', `must be an integer from 1 to ${MAX_STEPS}`);
  }
  if (t.settledAmount !== undefined && t.settledAmount !== null && !isAmount(t.settledAmount)) throw invalid('transaction.settledAmount', 'must be a non-negative number or null');
  for (const name of ['declineReason', 'relatedTransactionId', 'authorizationId'] as const) {
    if (!isOptionalString(t[name])) throw invalid(`transaction.${name}`, 'must be a string of at most 100 characters or null');
  }
  const m = t.merchant;
  if (!isObject(m) || !['name', 'mcc', 'city', 'country'].every((k) => typeof m[k] === 'string' && (m[k] as string).length <= 200)) {
    throw invalid('transaction.merchant', 'must hold name, mcc, city and country');
  }
  const history = checkHistory(t.history);
  if (history && t.version !== undefined && t.version !== history.length) throw invalid('transaction.version', 'must equal the number of history steps');
  const transaction: Transaction = {
    id: t.id as string,
    cardId: t.cardId as string,
    accountId: (t.accountId as string | null | undefined) ?? null,
    amount: t.amount,
    currency: t.currency as string,
    type: t.type as TransactionType,
    status: t.status as TransactionStatus,
    merchant: { name: m.name as string, mcc: m.mcc as string, city: m.city as string, country: m.country as string },
    createdAt: t.createdAt as string,
    ...(t.updatedAt === undefined ? {} : { updatedAt: t.updatedAt as string }),
    ...(t.version === undefined ? {} : { version: t.version as number }),
    ...(t.settledAmount === undefined ? {} : { settledAmount: t.settledAmount as number | null }),
    ...(t.declineReason === undefined ? {} : { declineReason: t.declineReason as string | null }),
    ...(t.relatedTransactionId === undefined ? {} : { relatedTransactionId: t.relatedTransactionId as string | null }),
    ...(t.authorizationId === undefined ? {} : { authorizationId: t.authorizationId as string | null }),
    ...(history === undefined ? {} : { history }),
  };
  return { id: body.id as string, type: body.type, occurredAt: body.occurredAt as string, transaction };
}

function receive(upstream: NotifyingUpstream, secrets: readonly string[], deps: SyncDeps): RequestHandler {
  return function receiveNotification(req, res, next) {
    void (async () => {
      if (!req.is('application/json')) throw new GatewayError('unsupported_media_type', 'Notifications are application/json');
      // Signed over the exact bytes received: verified before anything is parsed.
      const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
      const header = req.get('upstream-signature') ?? '';
      if (!verifySignature(header, raw, secrets, NOTIFICATION_TOLERANCE_SECONDS)) {
        throw new GatewayError('signature_invalid', 'Upstream-Signature is missing, does not verify, or its t is more than 300 s away');
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        throw new GatewayError('malformed_json', 'The notification is not JSON');
      }
      if (!isObject(body)) throw invalid('body', 'must be an object');
      if (!isString(body.id) || !ID.test(body.id)) throw invalid('id', 'must be 1 to 100 visible ASCII characters');
      const headerId = req.get('upstream-notification-id');
      if (headerId !== undefined && headerId !== body.id) throw invalid('Upstream-Notification-Id', 'must equal the body id');
      if (!isInstant(body.occurredAt)) throw invalid('occurredAt', 'must be a date-time');
      const outcome = upstream === 'issuer' ? await applyIssuerNotification(deps, checkIssuer(body)) : await applyProcessingNotification(deps.db, checkProcessing(body));
      deps.log.info({ upstream, notificationId: body.id, outcome: outcome ?? 'duplicate', requestId: req.requestId }, 'upstream notification');
      res.status(200).json({ received: true, duplicate: outcome === undefined, outcome: outcome ?? 'duplicate' });
    })().catch(next);
  };
}

/**
 * The upstream-notification listener's app (docs/upstreams.md, section 9): `POST
 * /upstream-notifications/issuer` and `/processing`, each signed with its upstream's secret. It
 * serves nothing else: no partner route, no admin route, and no partner credential opens it.
 */
export function createNotificationsApp(deps: SyncDeps, secrets: NotifySecrets): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestContext(deps.log, 'notifications'));
  for (const upstream of ['issuer', 'processing'] as const) {
    if (secrets[upstream].length === 0) continue;
    app.post(`/upstream-notifications/${upstream}`, express.raw({ type: () => true, limit: '64kb' }), receive(upstream, secrets[upstream], deps));
  }
  app.use(notFound());
  app.use(problemHandler(deps.log));
  return app;
}
