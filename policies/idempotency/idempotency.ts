import type { RequestHandler, Response } from 'express';
import { IDEMPOTENCY_TTL_HOURS_DEFAULT } from '../../gateway/catalog/policy-contracts';
import { GatewayError } from '../../gateway/errors';
import { MissingFactError, PARTNER } from '../../gateway/http/request-facts';
import { answeredThroughHook, beforeAnswer, replayedAnswer, writeAnswer } from '../../gateway/http/answer';
import { carriesBody } from '../../gateway/http/body';
import { IDEMPOTENCY_KEY, KeyClaimStore, PARTNER_KEYS, REPLAYED_HEADERS, idempotencyKeyOf, requestHash, type StoredAnswer } from '../../gateway/idempotency/key-claims';
import { claimKeeper } from './claim-keeper';
import { SCHEMAS } from '../../gateway/schemas';
import type { Database } from '../../gateway/db/database';
import type { Logger } from '../../gateway/logging/logger';
import type { Settings } from '../../gateway/settings';
import type { PolicyContext } from '../policy';
import { assertValid, bodyAjv, validatorOnFirstUse } from '../../gateway/validation/ajv';
import type { IdempotencyParams } from './schema';

/** What the idempotency policy needs of the gateway's services. */
export interface IdempotencyServices {
  db: Database;
  log: Logger;
  /** `IDEMPOTENCY_STALE_AFTER_SECONDS`: the lease of a claim whose heartbeat stopped. */
  settings: Pick<Settings, 'idempotencyStaleAfterSeconds'>;
}

/** The headers of an answer that its replays repeat (REPLAYED_HEADERS). */
function replayedHeaders(res: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return headers;
}

/**
 * Records the request's answer before it leaves, through the response's answer hook
 * (gateway/http/answer.ts, which the one answer writer runs for every answer): the
 * status, the exact body bytes and the replayed headers of a final answer are stored before the
 * partner sees them (so a retry right after replays them byte for byte); an answer that is not
 * final ({@link isFinal}: a 5xx, an upstream's "still running") releases the key first (so a retry
 * runs again). The client may have gone meanwhile: the handler still answers through the hook and
 * its outcome is still recorded. An answer written past the hook (past the one writer, by Express's
 * `res.send`, which test/unit/architecture refuses outside gateway/http/) cannot be stored: its key
 * is released once it is sent, and the miss is logged.
 */
function recordAnswer(res: Response, record: (answer: StoredAnswer) => Promise<void>, release: () => Promise<void>, onError: (err: unknown, message: string) => void): void {
  beforeAnswer(res, (answer) => record({ ...answer, headers: replayedHeaders(res) }).catch((err: unknown) => onError(err, 'idempotency key not recorded yet: retried in the background')));
  res.once('finish', () => {
    if (answeredThroughHook(res)) return;
    onError(new Error('an answer was written past the answer hook'), 'idempotency key released: its answer was not recorded');
    release().catch((err: unknown) => onError(err, 'idempotency key not released yet: retried in the background'));
  });
}

/**
 * Whether an answer is final, to be stored as the key's answer and replayed. Not final: a 5xx (an
 * upstream or database failure) and a 409 `idempotency_in_progress` (an upstream still runs an
 * earlier attempt of this operation, gateway/upstreams/failures.ts): both release the key, so a
 * retry with it runs again.
 */
function isFinal(answer: StoredAnswer): boolean {
  if (answer.status >= 500) return false;
  if (answer.status !== 409) return true;
  try {
    return (JSON.parse(answer.body.toString('utf8')) as { code?: unknown } | null)?.code !== 'idempotency_in_progress';
  } catch {
    return true;
  }
}

/**
 * The replay-only step (`replayOnly: true`), placed before ownership on routes whose resource
 * moves: a replace or re-issue retires the cardKey of its path, so a retry of it would meet 404
 * `not_found` at the ownership step. This step answers the stored first response when, and only
 * when, the same partner (from the verified token) completed the same route with the same key and
 * the same request (body compared as the route's validate step will have it). Anything else
 * (no key, a malformed one, another partner, no body or another body, still running, nothing
 * stored) goes on unchanged to ownership, validation and the ordinary idempotency step.
 */
function replayOnly(params: IdempotencyParams, { db }: IdempotencyServices): RequestHandler {
  const store = new KeyClaimStore(db, PARTNER_KEYS);
  const bodySchema = params.body ? validatorOnFirstUse(bodyAjv, SCHEMAS[params.body]) : undefined;
  return function idempotencyReplay(req, res, next) {
    const header = req.headers['idempotency-key'];
    const key = Array.isArray(header) ? header[0] : header;
    const partnerId = PARTNER.read(req)?._id;
    if (key === undefined || !IDEMPOTENCY_KEY.test(key) || partnerId === undefined) return next();
    // No body: it cannot be a repeat of a completed request (its body was required); the validate
    // step answers it 400 body_required, never this step with a replay.
    if (params.body && !carriesBody(req)) return next();
    let body: unknown = req.body ?? {};
    if (bodySchema) {
      try {
        body = assertValid(bodySchema(), structuredClone(body), 'body');
      } catch {
        // Invalid: it cannot be a repeat of a completed request; the validate step answers it.
        return next();
      }
    }
    const route = `${req.method} ${req.baseUrl}${req.path}`;
    store.completedAnswer({ partnerId, key, route, requestHash: requestHash(route, req.params, body) }).then(
      (stored) => (stored ? writeAnswer(res, replayedAnswer(stored)) : next()),
      (err: unknown) => next(err)
    );
  };
}

/**
 * The idempotency policy (after validation, before the handler). Without the header the request
 * runs as usual. With it: the first request runs and its final response is stored; the same key
 * with the same body replays it (`Idempotent-Replayed: true`); with another body → 409
 * `idempotency_key_reused`; while the first is still running → 409 `idempotency_in_progress` with
 * `Retry-After`. Responses of 5xx (an upstream or database failure) and 409
 * `idempotency_in_progress` (an upstream still runs an earlier attempt of this operation) release
 * the key so that the partner can retry with it. A key is never released while its handler runs: a client that
 * disconnects leaves the claim held until the handler's outcome is recorded.
 */
export function idempotency(params: IdempotencyParams, { services }: PolicyContext<IdempotencyServices>): RequestHandler {
  if (params.replayOnly) return replayOnly(params, services);
  const { db, log, settings } = services;
  const leaseSeconds = settings.idempotencyStaleAfterSeconds;
  const store = new KeyClaimStore(db, PARTNER_KEYS);
  const keeper = claimKeeper(db, log, leaseSeconds);
  const terms = { ttlHours: params.ttlHours ?? IDEMPOTENCY_TTL_HOURS_DEFAULT, leaseSeconds };
  return function idempotencyCheck(req, res, next) {
    let key: string | undefined;
    try {
      key = idempotencyKeyOf(req.headers);
    } catch (err) {
      return next(err);
    }
    if (key === undefined) return next();
    // es512-jwt runs first on every route that takes a key (the boot guards' jwt-first).
    const partner = PARTNER.read(req);
    if (partner === undefined) return next(new MissingFactError(PARTNER, 'the idempotency step'));
    const partnerId = partner._id;
    const route = `${req.method} ${req.baseUrl}${req.path}`;
    store.claim({ partnerId, key, route, requestHash: requestHash(route, req.params, req.body) }, terms).then(
      (claim) => {
        switch (claim.outcome) {
          case 'mismatch':
            return next(new GatewayError('idempotency_key_reused', 'This Idempotency-Key was used with a different request'));
          case 'in_progress':
            return next(new GatewayError('idempotency_in_progress', 'A request with this Idempotency-Key is still running; retry shortly', {
              headers: { 'Retry-After': '1' },
            }));
          case 'replay':
            writeAnswer(res, replayedAnswer(claim.response));
            return;
          case 'claimed': {
            // Held (heartbeat) until the handler's outcome is recorded, even if the client goes
            // away meanwhile: a retry then gets 409 idempotency_in_progress, then the replay.
            keeper.hold(claim.claim);
            // The upstream call of this operation carries this id on every retry (docs/upstreams.md):
            // the UPSTREAM_OPERATION fact, the handler's `operation`.
            req.upstreamOperation = { id: claim.claim.operationId, resumed: claim.claim.resumed };
            recordAnswer(
              res,
              (answer) => keeper.settle(claim.claim, isFinal(answer) ? { kind: 'complete', response: answer } : { kind: 'release' }),
              () => keeper.settle(claim.claim, { kind: 'release' }),
              (err, message) => log.error({ err, requestId: req.requestId }, message)
            );
            return next();
          }
        }
      },
      (err: unknown) => next(err)
    );
  };
}
