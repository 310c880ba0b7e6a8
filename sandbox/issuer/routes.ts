import type { Request, Router } from 'express';
import type { AuthorizeRequest, ForcePinLockRequest, LimitUpdate, PinChangeRequest, StatusChangeRequest, SuccessorRequest } from '../../contracts/upstreams';
import { encryptOaepSha256, parseSecurityKey, pinEncryptionKey } from '../shared/rsa';
import { queryParam } from '../shared/sandbox-app';
import { upstreamError, type ErrorDetail } from '../shared/sandbox-error';
import { compileSchemaValidator, EXP_DATE_PATTERN, type Checker } from '../shared/validation';
import { cardView, PIN_TRIES, recordStatusChange, type CardRecord, type CardStore, type NewCard } from './card-store';
import { isLimitName, LIMIT_NAMES, limitView, type CardLimit, type LimitName } from './limits';
import * as schemas from './schemas';
import { ACTIONS_REQUIRING_EXP_DATE, nextStatusCode, STATUS_CODE_VALUES, type IssuerStatusCode } from './status-codes';
import { newNotificationId, type Notifier } from '../shared/notifier';
import { mountNotifyTargetRoutes } from '../shared/notify-target';
import { deduplicateByIdempotencyKey, IdempotencyBook } from '../shared/idempotency';


// Each checker's value is typed by its schema; the annotation is the upstream contract's type, so a
// schema that admits a value the contract does not describe does not compile.
const checkCreateCard: Checker<NewCard> = compileSchemaValidator(schemas.createCardSchema);
const checkStatusChange: Checker<StatusChangeRequest> = compileSchemaValidator(schemas.statusChangeSchema);
const checkEmbossName = compileSchemaValidator(schemas.embossNameSchema);
const checkSuccessor: Checker<SuccessorRequest> = compileSchemaValidator(schemas.successorSchema);
const checkThreeDSAnswer = compileSchemaValidator(schemas.threeDSAnswerSchema);
const checkPinChange: Checker<PinChangeRequest> = compileSchemaValidator(schemas.pinChangeSchema);
const checkForcePinLock: Checker<ForcePinLockRequest> = compileSchemaValidator(schemas.forcePinLockSchema);
const checkAuthorize: Checker<AuthorizeRequest> = compileSchemaValidator(schemas.authorizeSchema);
const checkPatchLimits: Checker<LimitUpdate[]> = compileSchemaValidator(schemas.patchLimitsSchema);
const checkPutLimit: Checker<LimitUpdate> = compileSchemaValidator(schemas.putLimitSchema);
const checkSetLimitUsed = compileSchemaValidator(schemas.setLimitUsedSchema);

/** Longest emboss name the issuer prints. */
const EMBOSS_NAME_MAX = 26;

/** Refuses an expiry month that has already ended (cards are never issued expired). */
function assertFutureExpDate(expDate: string): void {
  const [month, year] = expDate.split('/').map(Number);
  const now = new Date();
  if (year * 12 + month < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1) {
    throw upstreamError('INVALID_EXP_DATE', `expDate ${expDate} is in the past`);
  }
}

function assertNotClosed(card: CardRecord): void {
  if (card.statusCode === 'S4') throw upstreamError('CARD_CLOSED', `Card ${card.cardKey} is closed`);
}

function assertExpDate(card: CardRecord, expDate: string | undefined): void {
  if (expDate !== undefined && expDate !== card.expDate) {
    throw upstreamError('EXP_DATE_MISMATCH', 'expDate does not match the card');
  }
}

/** Decrypts a PIN block under the issuer's PIN key; 400 `INVALID_PIN_BLOCK` unless it holds 4–12 digits. */
function decryptPin(pinBlock: string): string {
  const pin = pinEncryptionKey().decrypt(pinBlock);
  if (pin === null || !/^[0-9]{4,12}$/.test(pin)) {
    throw upstreamError('INVALID_PIN_BLOCK', 'pin is not an RSA-OAEP-256 block of 4 to 12 digits under the PIN encryption key');
  }
  return pin;
}

/** Query of the CVV/PAN reads: both parameters required, expDate as MM/YYYY. */
function secretQuery(req: Request): { expDate: string; securityKey: string } {
  const expDate = queryParam(req, 'expDate');
  const securityKey = queryParam(req, 'securityKey');
  const details: ErrorDetail[] = [];
  if (expDate === undefined) details.push({ path: '?expDate', message: 'is required' });
  else if (!new RegExp(EXP_DATE_PATTERN).test(expDate)) details.push({ path: '?expDate', message: 'must be MM/YYYY' });
  if (securityKey === undefined || securityKey.length === 0) details.push({ path: '?securityKey', message: 'is required' });
  if (details.length > 0 || expDate === undefined || securityKey === undefined) {
    throw upstreamError('VALIDATION_ERROR', `Invalid request: ${details[0].path} ${details[0].message}`, details);
  }
  return { expDate, securityKey };
}

function limitOf(card: CardRecord, name: string): { name: LimitName; view: CardLimit } {
  if (!isLimitName(name)) {
    throw upstreamError('UNKNOWN_LIMIT', `Unknown limit ${name}; known: ${LIMIT_NAMES.join(', ')}`);
  }
  return { name, view: limitView(name, card.limits.get(name), card.currency) };
}

function allLimits(card: CardRecord): CardLimit[] {
  return LIMIT_NAMES.map((name) => limitOf(card, name).view);
}

/**
 * Checks limit updates as a whole (values first, then names) and returns the apply step, so
 * that one bad item changes nothing and the state check can run in between.
 */
function prepareLimitUpdates(card: CardRecord, updates: LimitUpdate[]): () => void {
  const negative = updates.find((u) => u.value < 0);
  if (negative) {
    throw upstreamError('INVALID_LIMIT_VALUE', `Limit ${negative.name} must not be negative`);
  }
  const names = updates.map((u) => limitOf(card, u.name).name);
  return function applyLimitUpdates(): void {
    updates.forEach((update, i) => card.limits.setValue(names[i], update.value));
  };
}

/** Mounts the issuer's real API on `router`. */
export function mountIssuerRoutes(router: Router, cards: CardStore, keys: IdempotencyBook = new IdempotencyBook()): void {
  // POST /cards, replace, re-issue and status changes with an Idempotency-Key run once (docs/upstreams.md 5.1).
  router.use(deduplicateByIdempotencyKey(keys));
  router.get('/pin-encryption-key', (_req, res) => {
    const key = pinEncryptionKey();
    res.json({ keyId: key.keyId, algorithm: key.algorithm, publicKey: key.publicKeyPem });
  });

  router.post('/cards', (req, res) => {
    const input = checkCreateCard(req.body);
    assertFutureExpDate(input.expDate);
    res.status(201).json(cardView(cards.create(input)));
  });

  router.get('/cards/:cardKey', (req, res) => {
    res.json(cardView(cards.get(req.params.cardKey)));
  });

  router.get('/cards/:cardKey/status', (req, res) => {
    const card = cards.get(req.params.cardKey);
    res.json({ cardKey: card.cardKey, statusCode: card.statusCode });
  });

  router.post('/cards/:cardKey/status', (req, res) => {
    const card = cards.get(req.params.cardKey);
    const body = checkStatusChange(req.body);
    if (body.expDate === undefined && ACTIONS_REQUIRING_EXP_DATE.includes(body.action)) {
      throw upstreamError('VALIDATION_ERROR', `Invalid request: /expDate is required for action ${body.action}`, [
        { path: '/expDate', message: `is required for action ${body.action}` },
      ]);
    }
    assertNotClosed(card);
    assertExpDate(card, body.expDate);
    const from = card.statusCode;
    const to = nextStatusCode(from, body.action);
    if (to === null) {
      throw upstreamError('INVALID_STATUS_TRANSITION', `Action ${body.action} is not allowed for a card in status ${from}`);
    }
    card.statusCode = to;
    recordStatusChange(card, {
      action: body.action,
      from,
      to,
      reason: body.reason ?? null,
      description: body.description ?? null,
      cardLocation: body.cardLocation ?? null,
      at: new Date().toISOString(),
    });
    res.json({ cardKey: card.cardKey, statusCode: to, previousStatusCode: from });
  });

  router.patch('/cards/:cardKey/emboss-name', (req, res) => {
    const card = cards.get(req.params.cardKey);
    const { embossedName } = checkEmbossName(req.body);
    if (embossedName.length === 0 || embossedName.length > EMBOSS_NAME_MAX || /\s/.test(embossedName)) {
      throw upstreamError('INVALID_EMBOSS_NAME', `embossedName must be 1 to ${EMBOSS_NAME_MAX} characters without spaces`);
    }
    assertNotClosed(card);
    card.embossedName = embossedName;
    res.json(cardView(card));
  });

  router.post('/cards/:cardKey/replace', (req, res) => {
    const old = cards.get(req.params.cardKey);
    const body = checkSuccessor(req.body);
    assertFutureExpDate(body.expDate);
    assertNotClosed(old);
    if (old.type !== 'physical') {
      throw upstreamError('NOT_PHYSICAL', `Card ${old.cardKey} is virtual; only physical cards are replaced`);
    }
    const card = cards.successor(old, body.expDate, body.pinMailer ?? null);
    cards.remove(old.cardKey);
    res.status(201).json({ cardKey: card.cardKey });
  });

  router.post('/cards/:cardKey/reissue', (req, res) => {
    const old = cards.get(req.params.cardKey);
    const body = checkSuccessor(req.body);
    assertFutureExpDate(body.expDate);
    assertNotClosed(old);
    const card = cards.successor(old, body.expDate, body.pinMailer ?? null);
    recordStatusChange(old, {
      action: 'reissued',
      from: old.statusCode,
      to: 'S4',
      reason: body.reason ?? null,
      description: `re-issued as ${card.cardKey}`,
      cardLocation: null,
      at: new Date().toISOString(),
    });
    old.statusCode = 'S4';
    res.status(201).json({ cardKey: card.cardKey });
  });

  router.get('/cards/:cardKey/cvv', (req, res) => {
    const card = cards.get(req.params.cardKey);
    const { expDate, securityKey } = secretQuery(req);
    const key = parseSecurityKey(securityKey);
    assertExpDate(card, expDate);
    res.json({ cvv: encryptOaepSha256(key, card.cvv) });
  });

  router.get('/cards/:cardKey/pan', (req, res) => {
    const card = cards.get(req.params.cardKey);
    const { expDate, securityKey } = secretQuery(req);
    const key = parseSecurityKey(securityKey);
    assertExpDate(card, expDate);
    res.json({ cardNumber: encryptOaepSha256(key, card.pan) });
  });

  router.put('/cards/:cardKey/3ds/answer', (req, res) => {
    const card = cards.get(req.params.cardKey);
    const { answer } = checkThreeDSAnswer(req.body);
    assertNotClosed(card);
    card.threeDSAnswer = answer;
    res.json(cardView(card));
  });

  router.post('/cards/:cardKey/pin/reset-tries', (req, res) => {
    const card = cards.get(req.params.cardKey);
    assertNotClosed(card);
    card.pinTriesRemaining = PIN_TRIES;
    res.json(cardView(card));
  });

  router.post('/cards/:cardKey/pin/change', (req) => {
    const card = cards.get(req.params.cardKey);
    const body = checkPinChange(req.body);
    decryptPin(body.pin);
    assertNotClosed(card);
    // Spec 7: the real issuer platform currently fails every PIN change; the sandbox does too.
    throw upstreamError('OPERATION_NOT_SUPPORTED', 'PIN change is not supported by the issuer platform');
  });

  router.post('/cards/:cardKey/pin/force-lock', (req) => {
    const card = cards.get(req.params.cardKey);
    checkForcePinLock(req.body);
    assertNotClosed(card);
    // Spec 7: the real issuer platform currently fails every forced PIN lock; the sandbox does too.
    throw upstreamError('OPERATION_NOT_SUPPORTED', 'Force PIN lock is not supported by the issuer platform');
  });

  router.post('/cards/:cardKey/authorize', (req, res) => {
    const card = cards.get(req.params.cardKey);
    const body = checkAuthorize(req.body);
    decryptPin(body.pin);
    assertNotClosed(card);
    res.json(cardView(card));
  });

  router.get('/cards/:cardKey/limits', (req, res) => {
    res.json(allLimits(cards.get(req.params.cardKey)));
  });

  router.patch('/cards/:cardKey/limits', (req, res) => {
    const card = cards.get(req.params.cardKey);
    const apply = prepareLimitUpdates(card, checkPatchLimits(req.body));
    assertNotClosed(card);
    apply();
    res.json(allLimits(card));
  });

  router.get('/cards/:cardKey/limits/:name', (req, res) => {
    res.json(limitOf(cards.get(req.params.cardKey), req.params.name).view);
  });

  router.put('/cards/:cardKey/limits/:name', (req, res) => {
    const card = cards.get(req.params.cardKey);
    const update = checkPutLimit(req.body);
    if (update.name !== req.params.name) {
      throw upstreamError('LIMIT_NAME_MISMATCH', `Body name ${update.name} differs from path name ${req.params.name}`);
    }
    const apply = prepareLimitUpdates(card, [update]);
    assertNotClosed(card);
    apply();
    res.json(limitOf(card, update.name).view);
  });

  router.get('/cards/:cardKey/limits/:name/available', (req, res) => {
    res.json({ available: limitOf(cards.get(req.params.cardKey), req.params.name).view.available });
  });
}

/** Mounts the issuer's test-only routes under `/__sandbox`. */
export function mountIssuerControlRoutes(router: Router, cards: CardStore, notifier: Notifier): void {
  // Where the notifications go (the gateway's listener and this upstream's secret): docs/upstreams.md, section 9.
  mountNotifyTargetRoutes(router, 'issuer', notifier);

  // A status change the issuer makes on its own (fraud team, expiry), whatever the partner transition
  // table allows; the gateway is notified (docs/upstreams.md, section 9) before this answers (2 s at most).
  router.post('/cards/:cardKey/issuer-status', (req, res, next) => {
    const card = cards.get(req.params.cardKey);
    const body = (req.body ?? {}) as { statusCode?: unknown; reason?: unknown };
    if (typeof body.statusCode !== 'string' || !STATUS_CODE_VALUES.includes(body.statusCode as IssuerStatusCode)) {
      throw upstreamError('VALIDATION_ERROR', 'Invalid request: statusCode must be an issuer status code');
    }
    if (body.reason !== undefined && body.reason !== null && (typeof body.reason !== 'string' || body.reason.length > 500)) {
      throw upstreamError('VALIDATION_ERROR', 'Invalid request: reason must be a string of at most 500 characters');
    }
    if (card.statusCode === 'S4') throw upstreamError('CARD_CLOSED', `Card ${card.cardKey} is closed`);
    const previousStatusCode = card.statusCode;
    const statusCode = body.statusCode as IssuerStatusCode;
    const reason = (body.reason as string | null | undefined) ?? null;
    card.statusCode = statusCode;
    recordStatusChange(card, { action: 'issuer', from: previousStatusCode, to: statusCode, reason, description: null, cardLocation: null, at: new Date().toISOString() });
    const answer = { cardKey: card.cardKey, statusCode, previousStatusCode };
    const notification = { id: newNotificationId(), type: 'card.status_changed', occurredAt: new Date().toISOString(), cardKey: card.cardKey, previousStatusCode, statusCode, reason };
    notifier.send(notification).then((notified) => res.json({ ...answer, notified }), next);
  });


  // Every card the issuer holds (?clientCode= narrows to one holder): lets tests count creations.
  router.get('/cards', (req, res) => {
    const clientCode = queryParam(req, 'clientCode');
    res.json((clientCode === undefined ? cards.list() : cards.listByClientCode(clientCode)).map(cardView));
  });

  router.get('/cards/:cardKey/secrets', (req, res) => {
    const card = cards.get(req.params.cardKey);
    res.json({ cardNumber: card.pan, cvv: card.cvv });
  });

  router.get('/cards/:cardKey', (req, res) => {
    const card = cards.get(req.params.cardKey);
    res.json({
      card: cardView(card),
      pinTriesRemaining: card.pinTriesRemaining,
      threeDSAnswer: card.threeDSAnswer,
      shippingAddressId: card.shippingAddressId,
      pinMailer: card.pinMailer,
      previousCardKey: card.previousCardKey,
      statusHistory: card.statusHistory,
      limits: allLimits(card),
    });
  });

  router.put('/cards/:cardKey/limits/:name', (req, res) => {
    const card = cards.get(req.params.cardKey);
    const { used } = checkSetLimitUsed(req.body);
    const { name } = limitOf(card, req.params.name);
    card.limits.setUsed(name, used);
    res.json(limitOf(card, name).view);
  });
}
