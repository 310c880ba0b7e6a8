import express, { type Request, type RequestHandler } from 'express';
import { recordAuthorizationDecision, recordTokenizationDecision } from '../metrics';
import { checkAuthorizationToken } from '../authorizations/decision';
import { ANSWER_MARGIN_MS, DecisionTooLate, type AuthorizationDecision, type AuthorizationRequest, type DecisionProgress } from '../authorizations/decide';
import type { SyncDeps } from '../cards/card-sync';
import { GatewayError } from '../errors';
import { writeAnswer } from '../http/answer';
import { notFound, problemHandler, sendProblem } from '../http/problem';
import { requestContext } from '../http/request-context';
import type { Logger } from '../logging/logger';
import { verifySignature } from '../outbound/signature';
import type { NotifySecrets } from './secrets';
import { TRANSACTION_ID } from '../ids';
import { checkTransaction, instant, isObject, UPSTREAM_CARD_KEY } from '../transactions/validate';
import { mark, tracing, traceNow, writeTrace } from '../authorizations/decision-trace';
import { PartnerFaultLog, type FaultedAnswer } from '../authorizations/partner-faults';
import { checkTokenizationRequest, checkTokenNotification, checkVerificationRequest } from '../tokens/validate';
import type { TokenizationDecider } from '../tokens/decider';
import { answerOf } from '../tokens/decision';
import type { TokenizationProgress } from '../tokens/decide';
import { applyIssuerNotification, applyProcessingNotification, applyTokenNotification, type IssuerNotification, type NotifyingUpstream, type ProcessingNotification } from './apply';

/** How far a notification's `t` may be from the gateway's clock, in seconds (either way). */
export const NOTIFICATION_TOLERANCE_SECONDS = 300;


const ID = /^[\x21-\x7e]{1,100}$/;
const STATUS_CODE = /^[0-9A-Z]{2}$/;

function invalid(name: string, reason: string): GatewayError {
  return new GatewayError('validation_failed', `The notification is invalid: ${name} ${reason}`, { invalidParams: [{ name, reason }] });
}

const isString = (v: unknown, max = 200): v is string => typeof v === 'string' && v.length >= 1 && v.length <= max;
const isInstant = (v: unknown): v is string => instant(v) !== undefined;

function checkIssuer(body: Record<string, unknown>): IssuerNotification {
  if (body.type !== 'card.status_changed') throw invalid('type', 'must be card.status_changed');
  if (!isString(body.cardKey) || !UPSTREAM_CARD_KEY.test(body.cardKey)) throw invalid('cardKey', 'must be a card key');
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

function checkProcessing(body: Record<string, unknown>): ProcessingNotification {
  if (body.type !== 'transaction.created' && body.type !== 'transaction.updated') throw invalid('type', 'must be transaction.created, transaction.updated, token.created or token.updated');
  return { id: body.id as string, type: body.type, occurredAt: body.occurredAt as string, transaction: checkTransaction(body.transaction) };
}

/** The request's body once its signature verified over the exact bytes received, parsed, with a well-formed id and occurredAt. */
function verifiedBody(req: Request, secrets: readonly string[]): Record<string, unknown> {
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
  if (!isInstant(body.occurredAt)) throw invalid('occurredAt', 'must be an RFC 3339 date-time');
  return body;
}

function receive(upstream: NotifyingUpstream, secrets: readonly string[], deps: SyncDeps): RequestHandler {
  return function receiveNotification(req, res, next) {
    void (async () => {
      const body = verifiedBody(req, secrets);
      const outcome =
        upstream === 'issuer'
          ? await applyIssuerNotification(deps, checkIssuer(body))
          : body.type === 'token.created' || body.type === 'token.updated'
            ? await applyTokenNotification(deps.db, checkTokenNotification(body))
            : await applyProcessingNotification(deps.db, checkProcessing(body));
      deps.log.info({ upstream, notificationId: body.id, outcome: outcome ?? 'duplicate', requestId: req.requestId }, 'upstream notification');
      writeAnswer(res, { status: 200, body: { received: true, duplicate: outcome === undefined, outcome: outcome ?? 'duplicate' } });
    })().catch(next);
  };
}

/** What the listener needs to answer the processor's authorization requests (docs/authorizations.md). */
export interface AuthorizationAnswering {
  decide(request: AuthorizationRequest, answerBy: number, progress: DecisionProgress): Promise<AuthorizationDecision>;
  /** `AUTHORIZATION_DEADLINE_MS`: the gateway answers by it less {@link ANSWER_MARGIN_MS}, counted from the request's arrival. */
  deadlineMs: number;
}

const AUTHORIZATION_TYPES = ['PURCHASE', 'WITHDRAWAL'];

function checkAuthorizationRequest(body: Record<string, unknown>): AuthorizationRequest {
  if (body.type !== 'authorization.request') throw invalid('type', 'must be authorization.request');
  const a = body.authorization;
  if (!isObject(a)) throw invalid('authorization', 'must be an object');
  if (a.id !== body.id) throw invalid('authorization.id', 'must equal the body id');
  if (!isString(a.transactionId, 64) || !TRANSACTION_ID.test(a.transactionId)) throw invalid('authorization.transactionId', 'must be 1 to 64 of A-Z a-z 0-9 _ -');
  if (!isString(a.cardId, 64) || !UPSTREAM_CARD_KEY.test(a.cardId)) throw invalid('authorization.cardId', 'must be a card key');
  if (!(typeof a.amount === 'number' && Number.isFinite(a.amount) && a.amount > 0 && a.amount <= 1e12)) throw invalid('authorization.amount', 'must be a positive number');
  if (!isString(a.currency, 3) || !/^[A-Z]{3}$/.test(a.currency)) throw invalid('authorization.currency', 'must be an ISO 4217 code');
  if (!AUTHORIZATION_TYPES.includes(a.type as string)) throw invalid('authorization.type', 'must be PURCHASE or WITHDRAWAL');
  // Stored and echoed as UTC ISO, as every date of a transaction (checkTransaction).
  const at = instant(a.at);
  if (at === undefined) throw invalid('authorization.at', 'must be an RFC 3339 date-time');
  const m = a.merchant;
  if (!isObject(m) || !['name', 'city'].every((k) => typeof m[k] === 'string' && (m[k] as string).length <= 200) || !(typeof m.mcc === 'string' && /^[0-9]{4}$/.test(m.mcc)) || !(typeof m.country === 'string' && /^[A-Z]{2}$/.test(m.country))) {
    throw invalid('authorization.merchant', 'must hold name, mcc (4 digits), city and country (ISO 3166-1 alpha-2)');
  }
  // A purchase made with a network token (upstreams.md 10.8): its reference and wallet.
  const token = checkAuthorizationToken(a.token);
  return {
    ...(token === undefined ? {} : { token }),
    id: a.id as string,
    transactionId: a.transactionId,
    cardId: a.cardId,
    amount: a.amount,
    currency: a.currency,
    type: a.type as AuthorizationRequest['type'],
    merchant: { name: m.name as string, mcc: m.mcc, city: m.city as string, country: m.country },
    at,
  };
}

/**
 * `POST /upstream-notifications/processing/authorizations`: the processor asks for a decision. Signed
 * and checked as the notifications; answered `{approved, declineReason?}` by `answerBy`, the deadline
 * less the margin, or at that moment 503 `decision_unavailable` (and at once 503
 * `database_unavailable` when the database cannot be reached), so the processor applies its stand-in
 * without waiting. Never later: a recording still on its way then is refused by the database past
 * its commit-by instant, whenever it arrives (decide.ts, `commitByOf`).
 *
 * Logs: a decision whose partner endpoint did not answer usably (its default applied, or a 503
 * after it) is the partner's fault: one warn line per partner per second at most
 * ({@link PartnerFaultLog}), and the request's access line at info. Any other 503 is the gateway's:
 * error, as every 5xx. A decision that reaches the gateway after its 503 went out (committed before
 * its commit-by instant, its acknowledgement later than the reserve) is logged at error: the
 * processor's stand-in overrules it (docs/authorizations.md, "Deadline").
 */
function answerAuthorizations(secrets: readonly string[], answering: AuthorizationAnswering, log: Logger): RequestHandler {
  const faults = new PartnerFaultLog(log);
  return function answerAuthorization(req, res, next) {
    const arrived = Date.now();
    const answerBy = arrived + answering.deadlineMs - ANSWER_MARGIN_MS;
    const took = () => (Date.now() - arrived) / 1000;
    let answered = false;
    let authorizationId: string | undefined;
    const progress: DecisionProgress = {};
    if (tracing()) {
      // The diagnostic (AUTHORIZATION_TRACE_FILE): the request event's time, set by the server's first listener.
      const trace = { request: (req as { traceRequestAt?: number }).traceRequestAt ?? 0, handler: traceNow() };
      progress.trace = trace;
      res.on('finish', () => {
        mark(trace, 'written');
        writeTrace(trace);
      });
    }
    const partnerFault = (answer: FaultedAnswer) => {
      const fault = progress.partnerFault;
      if (!fault || authorizationId === undefined) return false;
      faults.report({ ...fault, authorizationId, answered: answer });
      res.locals.logFields = { authorizationId, partnerFault: fault.reason };
      return true;
    };
    const unavailable = () => {
      answered = true;
      recordAuthorizationDecision('unavailable', 'none', took());
      const error = new GatewayError('decision_unavailable', 'No decision could be recorded before the deadline: apply the stand-in');
      if (!partnerFault('unavailable')) return next(error);
      // The partner's endpoint took the budget: its fault, logged once above; the access line at info.
      res.locals.faultOf = 'partner';
      sendProblem(res, req.requestId, error);
    };
    // At `answerBy`, the 503 unless a decision is answered: after one turn of the event loop's I/O
    // (setImmediate runs after the poll phase), so that a recording's acknowledgement that arrived
    // while this timer was due is read first, rather than answered over.
    const timer = setTimeout(() => setImmediate(() => answered || unavailable()), Math.max(0, answerBy - Date.now()));
    void (async () => {
      const body = verifiedBody(req, secrets);
      const request = checkAuthorizationRequest(body);
      authorizationId = request.id;
      if (progress.trace) progress.trace.id = request.id;
      const decision = await answering.decide(request, answerBy, progress);
      mark(progress.trace, 'decided');
      if (answered) {
        // A repeat that read another request's decision after its own 503 changed nothing; this request's own recording did.
        if (!progress.recorded) return;
        log.error({ authorizationId: request.id, approved: decision.approved, decidedBy: decision.decidedBy, lateMs: Date.now() - answerBy }, 'an authorization decision reached the gateway after its 503: the processor\'s stand-in overrules it');
        return;
      }
      recordAuthorizationDecision(decision.approved ? 'approved' : 'declined', decision.decidedBy, took());
      partnerFault('default');
      // On the request's access-log line (one line per decision, not two).
      res.locals.logFields = { ...res.locals.logFields, authorizationId: request.id, approved: decision.approved, decidedBy: decision.decidedBy };
      writeAnswer(res, { status: 200, body: decision.approved ? { approved: true } : { approved: false, declineReason: decision.declineReason } });
    })()
      .catch((err: unknown) => {
        if (answered) {
          // The recording reached the database after the 503 (a link that held it, a lock it waited
          // for) and was refused there, past its commit-by instant: what was answered stands.
          if (err instanceof DecisionTooLate && err.byDatabase && authorizationId !== undefined) log.info({ authorizationId, lateMs: Date.now() - answerBy }, 'an authorization decision was refused by the database after its 503 (past its commit-by instant): nothing recorded');
          return;
        }
        if (err instanceof DecisionTooLate) return unavailable();
        // A refused request (signature, body) is no decision; an error past them is the stand-in's.
        if (!(err instanceof GatewayError && err.status < 500)) recordAuthorizationDecision('unavailable', 'none', took());
        next(err);
      })
      .finally(() => {
        answered = true;
        clearTimeout(timer);
      });
  };
}

/** What the listener needs to answer the processor's tokenization and verification requests (docs/upstreams.md 10.3, 10.4). */
export type TokenizationAnswering = Pick<TokenizationDecider, 'deadlineMs' | 'decide' | 'verify'>;

/**
 * The deadline of one decision request, as `answerAuthorizations` keeps it: `answerBy` is the
 * arrival plus `deadlineMs` less the margin; at `answerBy` (after one turn of the event loop's I/O,
 * so that a recording's acknowledgement that arrived meanwhile is read first) `unavailable` answers
 * 503 unless the request was answered. `settle()` ends the timer when the work ends.
 */
function deadlineOf(deadlineMs: number, unavailable: () => void): { arrived: number; answerBy: number; answered(): boolean; markAnswered(): void; settle(): void } {
  const arrived = Date.now();
  const answerBy = arrived + deadlineMs - ANSWER_MARGIN_MS;
  let answered = false;
  const timer = setTimeout(() => setImmediate(() => {
    if (answered) return;
    answered = true;
    unavailable();
  }), Math.max(0, answerBy - Date.now()));
  return {
    arrived,
    answerBy,
    answered: () => answered,
    markAnswered: () => {
      answered = true;
    },
    settle: () => {
      answered = true;
      clearTimeout(timer);
    },
  };
}

/**
 * `POST /upstream-notifications/processing/tokenizations`: the processor asks for a tokenization
 * decision (10.3). Signed and checked as the notifications; answered `{decision, declineReason?}` by
 * `answerBy` (`TOKENIZATION_DEADLINE_MS` less the margin), or at that moment 503
 * `decision_unavailable` (at once 503 `database_unavailable` when the database cannot be reached),
 * so that the processor's stand-in applies without waiting; a recording still on its way then is
 * refused by the database at its COMMIT, past its commit-by instant. The partner endpoint's faults
 * are logged as for purchases (one warn line per partner per second at most), never its answer.
 */
function answerTokenizations(secrets: readonly string[], answering: TokenizationAnswering, log: Logger): RequestHandler {
  const faults = new PartnerFaultLog(log);
  return function answerTokenization(req, res, next) {
    let tokenizationId: string | undefined;
    const progress: TokenizationProgress = {};
    const partnerFault = (answer: FaultedAnswer) => {
      const fault = progress.partnerFault;
      if (!fault || tokenizationId === undefined) return false;
      faults.report({ ...fault, authorizationId: tokenizationId, tokenization: true, answered: answer });
      res.locals.logFields = { ...res.locals.logFields, tokenizationId, partnerFault: fault.reason };
      return true;
    };
    const deadline = deadlineOf(answering.deadlineMs, () => {
      recordTokenizationDecision('unavailable', 'none', took());
      const error = new GatewayError('decision_unavailable', 'No decision could be recorded before the deadline: apply the stand-in');
      if (!partnerFault('unavailable')) return next(error);
      res.locals.faultOf = 'partner';
      sendProblem(res, req.requestId, error);
    });
    const took = () => (Date.now() - deadline.arrived) / 1000;
    void (async () => {
      const body = verifiedBody(req, secrets);
      const request = checkTokenizationRequest(body);
      tokenizationId = request.id;
      const decision = await answering.decide(request, deadline.answerBy, progress);
      if (deadline.answered()) {
        if (progress.recorded) log.error({ tokenizationId, decision: decision.decision, decidedBy: decision.decidedBy, lateMs: Date.now() - deadline.answerBy }, "a tokenization decision reached the gateway after its 503: the processor's stand-in overrules it");
        return;
      }
      deadline.markAnswered();
      recordTokenizationDecision(decision.decision, decision.decidedBy, took());
      partnerFault('default');
      // On the request's access-log line: the ids and the outcome, never a code or the partner's reason.
      res.locals.logFields = { ...res.locals.logFields, tokenizationId, ...(progress.tokenId === undefined ? {} : { tokenId: progress.tokenId }), decision: decision.decision, decidedBy: decision.decidedBy };
      writeAnswer(res, { status: 200, body: answerOf(decision) });
    })()
      .catch((err: unknown) => {
        if (deadline.answered()) {
          if (err instanceof DecisionTooLate && err.byDatabase && tokenizationId !== undefined) log.info({ tokenizationId, lateMs: Date.now() - deadline.answerBy }, 'a tokenization decision was refused by the database after its 503 (past its commit-by instant): nothing recorded');
          return;
        }
        deadline.markAnswered();
        if (err instanceof DecisionTooLate) {
          recordTokenizationDecision('unavailable', 'none', took());
          const error = new GatewayError('decision_unavailable', 'No decision could be recorded before the deadline: apply the stand-in');
          if (!partnerFault('unavailable')) return next(error);
          res.locals.faultOf = 'partner';
          return sendProblem(res, req.requestId, error);
        }
        if (!(err instanceof GatewayError && err.status < 500)) recordTokenizationDecision('unavailable', 'none', took());
        next(err);
      })
      .finally(() => deadline.settle());
  };
}

/**
 * `POST /upstream-notifications/processing/tokenizations/verifications`: the processor asks whether
 * the code the cardholder typed is right (10.4). Answered `{verified: true}` or `{verified: false,
 * reason, attemptsLeft}` by the same deadline as a tokenization, or 503. The code is in no log
 * line: the access line carries the attempt's id and its outcome only.
 */
function answerVerifications(secrets: readonly string[], answering: TokenizationAnswering, log: Logger): RequestHandler {
  return function answerVerification(req, res, next) {
    let verificationId: string | undefined;
    const deadline = deadlineOf(answering.deadlineMs, () => next(new GatewayError('decision_unavailable', 'No answer could be recorded before the deadline: apply the stand-in')));
    void (async () => {
      const body = verifiedBody(req, secrets);
      const request = checkVerificationRequest(body);
      verificationId = request.id;
      const { answer, recorded } = await answering.verify(request, deadline.answerBy);
      if (deadline.answered()) {
        if (recorded) log.error({ verificationId, verified: answer.verified, lateMs: Date.now() - deadline.answerBy }, "a verification attempt was recorded after its 503: the processor's stand-in overrules it");
        return;
      }
      deadline.markAnswered();
      res.locals.logFields = { ...res.locals.logFields, verificationId, verified: answer.verified, ...(answer.verified ? {} : { reason: answer.reason }) };
      writeAnswer(res, { status: 200, body: answer });
    })()
      .catch((err: unknown) => {
        if (deadline.answered()) return;
        deadline.markAnswered();
        if (err instanceof DecisionTooLate) return next(new GatewayError('decision_unavailable', 'No answer could be recorded before the deadline: apply the stand-in'));
        next(err);
      })
      .finally(() => deadline.settle());
  };
}

/**
 * The upstream-notification listener's app (docs/upstreams.md, sections 9 and 10): `POST
 * /upstream-notifications/issuer` and `/processing`, each signed with its upstream's secret, the
 * processor's authorization, tokenization and verification requests. It serves nothing else: no
 * partner route, no admin route, and no partner credential opens it.
 */
export function createNotificationsApp(deps: SyncDeps, secrets: NotifySecrets, authorizations?: AuthorizationAnswering, tokenizations?: TokenizationAnswering): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestContext(deps.log, 'notifications'));
  if (authorizations && secrets.processing.length > 0) {
    app.post('/upstream-notifications/processing/authorizations', express.raw({ type: () => true, limit: '64kb' }), answerAuthorizations(secrets.processing, authorizations, deps.log));
  }
  if (tokenizations && secrets.processing.length > 0) {
    app.post('/upstream-notifications/processing/tokenizations', express.raw({ type: () => true, limit: '64kb' }), answerTokenizations(secrets.processing, tokenizations, deps.log));
    app.post('/upstream-notifications/processing/tokenizations/verifications', express.raw({ type: () => true, limit: '64kb' }), answerVerifications(secrets.processing, tokenizations, deps.log));
  }
  for (const upstream of ['issuer', 'processing'] as const) {
    if (secrets[upstream].length === 0) continue;
    app.post(`/upstream-notifications/${upstream}`, express.raw({ type: () => true, limit: '64kb' }), receive(upstream, secrets[upstream], deps));
  }
  app.use(notFound());
  app.use(problemHandler(deps.log));
  return app;
}
