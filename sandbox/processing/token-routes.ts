import type { NextFunction, Response, Router } from 'express';
import {
  NETWORK_VERDICTS,
  TOKEN_DEVICE_TYPES,
  VERIFICATION_FAILURES,
  WALLET_PROVIDERS,
  type NetworkStatusSimulation,
  type NetworkVerdict,
  type SandboxNotify,
  type SimulatedTokenization,
  type SimulatedTokenizationResult,
  type SimulatedVerification,
  type SimulatedVerificationResult,
  type TokenizationRequest,
  type TokenMoveRequest,
  type TokenOperation,
  type TokenOperationRequest,
  type VerificationRequest,
} from '../../contracts/upstreams';
import { deduplicateByIdempotencyKey, type IdempotencyBook } from '../shared/idempotency';
import type { NotificationBody, Notifier } from '../shared/notifier';
import { positiveInt, queryParam } from '../shared/sandbox-app';
import { upstreamError, type ErrorDetail } from '../shared/sandbox-error';
import { isChangeCursor } from './recorded';
import { applePayPayload, cardKeyNamed, checkApplePayProvisioning, checkGooglePayProvisioning, checkTokenizable, googlePayPayload } from './provisioning';
import type { ProcessingState } from './routes';
import { defaultDevice, newTokenizationId, newTokenReference, newVerificationId, SANDBOX_TOKEN_REQUESTOR_IDS, tokenFacts, type TokenDecision } from './tokens';

/** Where the gateway decides the processor's tokenization requests (docs/upstreams.md 10.3). */
export const TOKENIZATION_REQUEST_PATH = '/upstream-notifications/processing/tokenizations';
/** Where the gateway checks a cardholder's verification code (docs/upstreams.md 10.4). */
export const VERIFICATION_REQUEST_PATH = '/upstream-notifications/processing/tokenizations/verifications';

/** How long the processor waits for the gateway's tokenization decision (`TOKENIZATION_DEADLINE_MS`, 1000 to 10000, default 2000). */
export function tokenizationDeadlineMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.TOKENIZATION_DEADLINE_MS);
  return Number.isInteger(value) && value >= 1000 && value <= 10_000 ? value : 2000;
}

const VISIBLE_ASCII_100 = /^[\x21-\x7e]{1,100}$/;
const NOTIFY_MODES: readonly SandboxNotify[] = ['deliver', 'drop', 'hold'];

function bad(details: ErrorDetail[]): never {
  throw upstreamError('VALIDATION_ERROR', `Invalid request: ${details[0].path} ${details[0].message}`, details);
}

/** The body as an object (none is `{}`), any member not in `allowed` listed in `details`. */
function objectBody(body: unknown, allowed: readonly string[], details: ErrorDetail[]): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) bad([{ path: '/', message: 'must be an object' }]);
  const b = body as Record<string, unknown>;
  for (const name of Object.keys(b)) if (!allowed.includes(name)) details.push({ path: `/${name}`, message: 'is not allowed' });
  return b;
}

function checkReason(value: unknown, details: ErrorDetail[]): void {
  if (value !== undefined && (typeof value !== 'string' || value.length === 0 || value.length > 200)) details.push({ path: '/reason', message: 'must be a string of 1 to 200 characters' });
}

function checkNotify(value: unknown, details: ErrorDetail[]): void {
  if (value !== undefined && !NOTIFY_MODES.includes(value as SandboxNotify)) details.push({ path: '/notify', message: 'must be deliver, drop or hold' });
}

/** A token operation's body (10.6): `{reason?, requestedBy}`. */
export function checkTokenOperation(body: unknown): TokenOperationRequest {
  const details: ErrorDetail[] = [];
  const b = objectBody(body, ['reason', 'requestedBy'], details);
  checkReason(b.reason, details);
  if (b.requestedBy !== 'partner' && b.requestedBy !== 'card_state') details.push({ path: '/requestedBy', message: 'is required: partner or card_state' });
  if (details.length > 0) bad(details);
  return b as unknown as TokenOperationRequest;
}

/** A move's body (10.6): `{toCardKey, reason}`. */
export function checkTokenMove(body: unknown, fromCardKey: string): TokenMoveRequest {
  const details: ErrorDetail[] = [];
  const b = objectBody(body, ['toCardKey', 'reason'], details);
  if (typeof b.toCardKey !== 'string' || b.toCardKey.length === 0 || b.toCardKey.length > 64) details.push({ path: '/toCardKey', message: 'is required: a string of 1 to 64 characters' });
  else if (b.toCardKey === fromCardKey) details.push({ path: '/toCardKey', message: 'must be another card than the one the tokens leave' });
  if (b.reason !== 'replaced' && b.reason !== 'reissued') details.push({ path: '/reason', message: 'is required: replaced or reissued' });
  if (details.length > 0) bad(details);
  return b as unknown as TokenMoveRequest;
}

/** `POST /__sandbox/tokenizations`'s body (10.9). */
export function checkTokenization(body: unknown): SimulatedTokenization {
  const details: ErrorDetail[] = [];
  const b = objectBody(body, ['cardId', 'walletProvider', 'tokenRequestorId', 'device', 'networkVerdict', 'riskScore', 'tokenizationId', 'notify'], details);
  if (typeof b.cardId !== 'string' || b.cardId.length === 0 || b.cardId.length > 64) details.push({ path: '/cardId', message: 'is required: a string of 1 to 64 characters' });
  if (!WALLET_PROVIDERS.includes(b.walletProvider as never)) details.push({ path: '/walletProvider', message: `is required: one of ${WALLET_PROVIDERS.join(', ')}` });
  if (b.tokenRequestorId !== undefined && (typeof b.tokenRequestorId !== 'string' || !/^[0-9]{11}$/.test(b.tokenRequestorId))) details.push({ path: '/tokenRequestorId', message: 'must be 11 digits' });
  if (b.device !== undefined) {
    const d = b.device;
    if (typeof d !== 'object' || d === null || Array.isArray(d)) details.push({ path: '/device', message: 'must be an object' });
    else {
      const device = d as Record<string, unknown>;
      for (const name of Object.keys(device)) if (!['type', 'name', 'ipCountry'].includes(name)) details.push({ path: `/device/${name}`, message: 'is not allowed' });
      if (!TOKEN_DEVICE_TYPES.includes(device.type as never)) details.push({ path: '/device/type', message: `is required: one of ${TOKEN_DEVICE_TYPES.join(', ')}` });
      if (device.name !== undefined && (typeof device.name !== 'string' || device.name.length === 0 || device.name.length > 64)) details.push({ path: '/device/name', message: 'must be a string of 1 to 64 characters' });
      if (device.ipCountry !== undefined && (typeof device.ipCountry !== 'string' || !/^[A-Z]{2}$/.test(device.ipCountry))) details.push({ path: '/device/ipCountry', message: 'must be an ISO 3166-1 alpha-2 code' });
    }
  }
  if (b.networkVerdict !== undefined && !NETWORK_VERDICTS.includes(b.networkVerdict as never)) details.push({ path: '/networkVerdict', message: `must be one of ${NETWORK_VERDICTS.join(', ')}` });
  if (b.riskScore !== undefined && !(Number.isInteger(b.riskScore) && (b.riskScore as number) >= 1 && (b.riskScore as number) <= 5)) details.push({ path: '/riskScore', message: 'must be an integer from 1 to 5' });
  if (b.tokenizationId !== undefined && (typeof b.tokenizationId !== 'string' || !VISIBLE_ASCII_100.test(b.tokenizationId))) details.push({ path: '/tokenizationId', message: 'must be 1 to 100 visible ASCII characters' });
  checkNotify(b.notify, details);
  if (details.length > 0) bad(details);
  return b as unknown as SimulatedTokenization;
}

/** `POST /__sandbox/tokens/{ref}/verify`'s body: `{code}`, a string of 1 to 64 characters. */
export function checkVerification(body: unknown): SimulatedVerification {
  const details: ErrorDetail[] = [];
  const b = objectBody(body, ['code'], details);
  if (typeof b.code !== 'string' || b.code.length === 0 || b.code.length > 64) details.push({ path: '/code', message: 'is required: a string of 1 to 64 characters' });
  if (details.length > 0) bad(details);
  return b as unknown as SimulatedVerification;
}

/** `POST /__sandbox/tokens/{ref}/network-status`'s body. */
export function checkNetworkStatus(body: unknown): NetworkStatusSimulation {
  const details: ErrorDetail[] = [];
  const b = objectBody(body, ['status', 'reason', 'notify'], details);
  if (b.status !== 'active' && b.status !== 'suspended' && b.status !== 'deactivated') details.push({ path: '/status', message: 'is required: active, suspended or deactivated' });
  checkReason(b.reason, details);
  checkNotify(b.notify, details);
  if (details.length > 0) bad(details);
  return b as unknown as NetworkStatusSimulation;
}

function checkRelease(body: unknown): 'oldest-first' | 'newest-first' {
  const details: ErrorDetail[] = [];
  const b = objectBody(body, ['order'], details);
  if (b.order !== undefined && b.order !== 'oldest-first' && b.order !== 'newest-first') details.push({ path: '/order', message: 'must be oldest-first or newest-first' });
  if (details.length > 0) bad(details);
  return (b.order as 'oldest-first' | 'newest-first' | undefined) ?? 'oldest-first';
}

function checkEmpty(body: unknown): void {
  const details: ErrorDetail[] = [];
  objectBody(body, [], details);
  if (details.length > 0) bad(details);
}

/** The decision the network's verdict stands for, when no gateway decides (no target, or a 404: 10.3). */
function verdictDecision(verdict: NetworkVerdict): TokenDecision {
  return verdict.decision === 'decline' ? { decision: 'decline', declineReason: 'network_declined' } : { decision: verdict.decision };
}

/**
 * The gateway's answer to a tokenization request as the processor reads it (10.3): a 200 of the
 * contract's shape is the decision; no target or a 404 is the network's verdict; anything else (a
 * timeout, a 5xx or 401, another body) is the processor's stand-in.
 */
export function readTokenizationAnswer(answer: { status: number; body: unknown } | undefined, hasTarget: boolean, verdict: NetworkVerdict): TokenDecision {
  if (!hasTarget || answer?.status === 404) return verdictDecision(verdict);
  const body = answer?.status === 200 ? (answer.body as { decision?: unknown; declineReason?: unknown } | undefined) : undefined;
  if (body?.decision === 'approve' || body?.decision === 'require_verification') return { decision: body.decision };
  if (body?.decision === 'decline' && typeof body.declineReason === 'string' && /^[a-z_]{1,40}$/.test(body.declineReason)) {
    return { decision: 'decline', declineReason: body.declineReason as never };
  }
  return { decision: 'stand_in' };
}

/** The gateway's answer to a verification request (10.4); `stand_in` when none was usable (the token stays as it is). */
export function readVerificationAnswer(answer: { status: number; body: unknown } | undefined): Omit<SimulatedVerificationResult, 'token'> {
  const body = answer?.status === 200 ? (answer.body as { verified?: unknown; reason?: unknown; attemptsLeft?: unknown } | undefined) : undefined;
  if (body?.verified === true) return { verified: true };
  if (body?.verified === false && VERIFICATION_FAILURES.includes(body.reason as never) && Number.isInteger(body.attemptsLeft) && (body.attemptsLeft as number) >= 0) {
    return { verified: false, reason: body.reason as SimulatedVerificationResult['reason'], attemptsLeft: body.attemptsLeft as number };
  }
  return { verified: false, reason: 'stand_in' };
}

/** Sends `bodies` one after the other, each awaited (2 s at most: it stays queued past that), then answers `status` `answer`. */
function sendThenAnswer(notifier: Notifier, res: Response, next: NextFunction, bodies: (NotificationBody | undefined)[], status: number, answer: unknown): void {
  void (async () => {
    for (const body of bodies) if (body) await notifier.send(body);
  })().then(() => res.status(status).json(answer), next);
}

/** Answers `status` `answer` at once, then sends the notifications (a token operation's change is notified after its answer: 10.6). */
function answerThenSend(notifier: Notifier, res: Response, bodies: (NotificationBody | undefined)[], status: number, answer: unknown): void {
  res.status(status).json(answer);
  void (async () => {
    for (const body of bodies) if (body) await notifier.send(body);
  })();
}

/**
 * Mounts the token service's API (docs/upstreams.md 10.2, 10.6, 10.7) on the processing sandbox's
 * router. The operations check, in 10.6's order, the token or card (404), the body (400), then the
 * `Idempotency-Key` (a replay answers the first result), then the transition (409).
 */
export function mountTokenRoutes(router: Router, state: ProcessingState, keys: IdempotencyBook, notifier: Notifier): void {
  const dedupe = deduplicateByIdempotencyKey(keys);

  // Push provisioning: nothing is kept and nothing logged; each call makes another payload (10.2).
  router.post('/tokens/provisioning/apple-pay', (req, res) => {
    const named = cardKeyNamed(req.body);
    if (named !== undefined) state.cardOf(named);
    const body = checkApplePayProvisioning(req.body);
    const card = state.cardOf(body.cardKey);
    checkTokenizable(card, state.lastStatusCode(card.cardKey));
    res.json(applePayPayload());
  });
  router.post('/tokens/provisioning/google-pay', (req, res) => {
    const named = cardKeyNamed(req.body);
    if (named !== undefined) state.cardOf(named);
    const body = checkGooglePayProvisioning(req.body);
    const card = state.cardOf(body.cardKey);
    checkTokenizable(card, state.lastStatusCode(card.cardKey));
    res.json(googlePayPayload(card));
  });

  // Before /tokens/:ref, which would take "changes" for a reference.
  router.get('/tokens/changes', (req, res) => {
    const details: ErrorDetail[] = [];
    const limit = positiveInt(req, 'limit', 100, 500, details);
    const after = queryParam(req, 'after') || undefined;
    if (after !== undefined && !isChangeCursor(after)) details.push({ path: '?after', message: 'must be a cursor answered as nextCursor' });
    if (details.length > 0) bad(details);
    res.json(state.tokens.changes(after, limit));
  });
  router.get('/tokens', (req, res) => {
    const cardKey = queryParam(req, 'cardKey');
    if (cardKey === undefined || cardKey.length === 0 || cardKey.length > 64) bad([{ path: '?cardKey', message: 'is required: a string of 1 to 64 characters' }]);
    res.json({ data: state.tokens.ofCard(cardKey) });
  });
  router.get('/tokens/:ref', (req, res) => {
    res.json(state.tokens.find(req.params.ref));
  });

  for (const operation of ['suspend', 'resume', 'deactivate'] as const satisfies readonly TokenOperation[]) {
    router.post(
      `/tokens/:ref/${operation}`,
      (req, _res, next) => {
        state.tokens.find(req.params.ref);
        checkTokenOperation(req.body);
        next();
      },
      dedupe,
      (req, res) => {
        const body = checkTokenOperation(req.body);
        const { token, notification } = state.tokens.operate(req.params.ref, operation, body, req.get('idempotency-key'));
        answerThenSend(notifier, res, [notification], 200, token);
      },
    );
  }

  router.post(
    '/cards/:cardKey/tokens/move',
    (req, _res, next) => {
      state.cardOf(req.params.cardKey);
      const named = (req.body as { toCardKey?: unknown } | undefined)?.toCardKey;
      if (typeof named === 'string' && named.length > 0 && named.length <= 64) state.cardOf(named);
      checkTokenMove(req.body, req.params.cardKey);
      next();
    },
    dedupe,
    (req, res) => {
      const body = checkTokenMove(req.body, req.params.cardKey);
      const { moved, notifications } = state.tokens.move(req.params.cardKey, body, req.get('idempotency-key'));
      answerThenSend(notifier, res, notifications, 200, { moved });
    },
  );
}

/**
 * Mounts the token control routes (docs/upstreams.md 10.9) under `/__sandbox`: a network's
 * tokenization run through the gateway's decision, a cardholder's code, the network's own changes,
 * the notifications' resend and release, and the tokens with their processor-side history.
 */
export function mountTokenControlRoutes(router: Router, state: ProcessingState, keys: IdempotencyBook, notifier: Notifier, deadlineMs = tokenizationDeadlineMs()): void {
  const dedupe = deduplicateByIdempotencyKey(keys);
  /** Tokenizations waiting for the gateway's answer, by tokenization id: a concurrent repeat gets the same token. */
  const inFlight = new Map<string, { cardKey: string; done: Promise<SimulatedTokenizationResult> }>();

  /** The whole tokenization as a network runs it (10.9): the reference reserved, the gateway asked, the token made as it answered. */
  const tokenize = async (input: SimulatedTokenization, tokenizationId: string): Promise<{ result: SimulatedTokenizationResult; notification: NotificationBody | undefined }> => {
    const card = state.cardOf(input.cardId);
    const tokenReference = newTokenReference();
    const { last4, tokenExpDate } = tokenFacts(tokenReference);
    const device = input.device ?? defaultDevice(input.walletProvider);
    const tokenRequestorId = input.tokenRequestorId ?? SANDBOX_TOKEN_REQUESTOR_IDS[input.walletProvider];
    const networkVerdict: NetworkVerdict = { decision: input.networkVerdict ?? 'approve', ...(input.riskScore !== undefined ? { riskScore: input.riskScore } : {}), reasons: [] };
    const at = new Date().toISOString();
    const request: TokenizationRequest = {
      id: tokenizationId,
      type: 'tokenization.request',
      occurredAt: at,
      tokenization: { id: tokenizationId, tokenReference, cardId: card.cardKey, walletProvider: input.walletProvider, tokenRequestorId, last4, tokenExpDate, device, networkVerdict, at },
    };
    const answer = await notifier.ask(TOKENIZATION_REQUEST_PATH, request as unknown as NotificationBody, deadlineMs);
    const decision = readTokenizationAnswer(answer, notifier.targetUrl !== null, networkVerdict);
    // Who set the first state, in the processor's history: no gateway to ask (or a 404) leaves it to the network.
    const requestedBy = decision.decision === 'stand_in' ? 'stand_in' : notifier.targetUrl === null || answer?.status === 404 ? 'network' : 'gateway';
    const status = decision.decision === 'approve' ? 'active' : decision.decision === 'require_verification' ? 'pending_verification' : 'declined';
    const reason = decision.decision === 'decline' ? decision.declineReason : decision.decision === 'stand_in' ? 'stand_in' : undefined;
    const { token, notification } = state.tokens.create(
      { tokenReference, cardKey: card.cardKey, tokenizationId, walletProvider: input.walletProvider, tokenRequestorId, last4, tokenExpDate, device, status, requestedBy, reason, decision },
      input.notify ?? 'deliver',
    );
    return { result: { token, decision }, notification };
  };

  router.post('/tokenizations', dedupe, (req, res, next) => {
    const input = checkTokenization(req.body);
    void (async () => {
      const card = state.cardOf(input.cardId);
      if (input.tokenizationId !== undefined) {
        // The processor's retry of one tokenization: the same token, nothing asked or notified.
        const known = state.tokens.ofTokenization(input.tokenizationId, card.cardKey);
        if (known) return res.status(201).json(known);
        const running = inFlight.get(input.tokenizationId);
        if (running && running.cardKey !== card.cardKey) throw upstreamError('TOKENIZATION_ID_REUSED', `tokenizationId ${input.tokenizationId} is another card's tokenization`);
        if (running) return res.status(201).json(await running.done);
      }
      const tokenizationId = input.tokenizationId ?? newTokenizationId();
      const run = tokenize(input, tokenizationId);
      const done = run.then((r) => r.result);
      // Its failure is answered below; a repeat waiting on it answers the same failure.
      done.catch(() => undefined);
      inFlight.set(tokenizationId, { cardKey: card.cardKey, done });
      try {
        const { result, notification } = await run;
        sendThenAnswer(notifier, res, next, [notification], 201, result);
      } finally {
        inFlight.delete(tokenizationId);
      }
    })().catch(next);
  });

  router.post('/tokens/:ref/verify', dedupe, (req, res, next) => {
    void (async () => {
      const before = state.tokens.find(req.params.ref);
      const { code } = checkVerification(req.body);
      if (before.status !== 'pending_verification') throw upstreamError('NOT_PENDING_VERIFICATION', `Token ${before.tokenReference} is ${before.status}, not pending_verification`);
      const id = newVerificationId();
      const request: VerificationRequest = { id, type: 'tokenization.verification', occurredAt: new Date().toISOString(), verification: { id, tokenReference: before.tokenReference, code } };
      const outcome = readVerificationAnswer(await notifier.ask(VERIFICATION_REQUEST_PATH, request as unknown as NotificationBody, deadlineMs));
      // Another attempt may have settled the token meanwhile: only a token still pending changes.
      const pending = state.tokens.find(before.tokenReference).status === 'pending_verification';
      let notification: NotificationBody | undefined;
      if (pending && outcome.verified) notification = state.tokens.verified(before.tokenReference, 'active', undefined);
      else if (pending && outcome.attemptsLeft === 0) notification = state.tokens.verified(before.tokenReference, 'declined', outcome.reason === 'wrong_code' ? 'attempts_exhausted' : outcome.reason);
      sendThenAnswer(notifier, res, next, [notification], 200, { ...outcome, token: state.tokens.find(before.tokenReference) });
    })().catch(next);
  });

  router.post('/tokens/:ref/network-status', dedupe, (req, res, next) => {
    state.tokens.find(req.params.ref);
    const input = checkNetworkStatus(req.body);
    const { token, notification } = state.tokens.network(req.params.ref, input);
    sendThenAnswer(notifier, res, next, [notification], 200, token);
  });

  router.post('/tokens/:ref/notifications/resend', dedupe, (req, res, next) => {
    checkEmpty(req.body);
    sendThenAnswer(notifier, res, next, [state.tokens.resend(req.params.ref)], 200, { sent: 1 });
  });
  router.post('/tokens/:ref/notifications/release', dedupe, (req, res, next) => {
    const bodies = state.tokens.release(req.params.ref, checkRelease(req.body));
    sendThenAnswer(notifier, res, next, bodies, 200, { sent: bodies.length });
  });

  router.get('/tokens', (req, res) => {
    const cardKey = queryParam(req, 'cardKey') || undefined;
    res.json(state.tokens.list(cardKey));
  });
}
