import crypto from 'node:crypto';
import { configure } from 'safe-stable-stringify';
import type { RequestHandler, Response } from 'express';
import { GatewayError } from '../../gateway/errors';
import { claimKeeper } from './claim-keeper';
import { IdempotencyStore, REPLAYED_HEADERS, type StoredResponse } from './idempotency-store';
import { SCHEMAS } from '../../gateway/schemas';
import type { Database } from '../../gateway/db/database';
import type { Logger } from '../../gateway/logging/logger';
import type { PolicyContext } from '../policy';
import { assertValid, bodyAjv, validatorOnFirstUse } from '../../gateway/validation/ajv';
import type { IdempotencyParams } from './schema';

/** What the idempotency policy needs of the gateway's services. */
export interface IdempotencyServices {
  db: Database;
  log: Logger;
}

const KEY = /^[\x21-\x7e]{1,255}$/;

/** JSON with object keys sorted (safe-stable-stringify), so that the same body always hashes the same. */
const canonical = configure({ deterministic: true });

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
 * Holds the request's final write (`res.end`, which `res.send` calls once every header is set)
 * until its outcome is recorded: the status, the exact body bytes and the replayed headers of a
 * final response are stored before the partner sees them (so a retry right after replays them
 * byte for byte); an answer that is not final ({@link isFinal}: a 5xx, an upstream's "still
 * running") releases the key first (so a retry runs again). The client may have gone
 * meanwhile: the handler still ends here and its outcome is still recorded.
 */
function recordBeforeEnding(res: Response, record: (answer: StoredResponse) => Promise<void>, onError: (err: unknown) => void): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  let intercepted = false;
  res.end = function endAfterRecording(...args: unknown[]) {
    if (intercepted) return end(...args);
    intercepted = true;
    const [chunk, encoding] = args;
    const body = typeof chunk === 'string'
      ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
      : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array
        ? Buffer.from(chunk)
        : Buffer.alloc(0);
    record({ status: res.statusCode, body, headers: replayedHeaders(res) }).then(
      () => end(...args),
      (err: unknown) => {
        onError(err);
        end(...args);
      }
    );
    return res;
  } as Response['end'];
}

/** The hash a request is recognised by: its route (method and path), path parameters and body. */
export function requestHash(route: string, params: unknown, body: unknown): string {
  return crypto.createHash('sha256').update(canonical({ route, params, body })!).digest('hex');
}

/**
 * Whether an answer is final, to be stored as the key's answer and replayed. Not final: a 5xx (an
 * upstream or database failure) and a 409 `idempotency_in_progress` (an upstream still runs an
 * earlier attempt of this operation, gateway/upstreams/failures.ts): both release the key, so a
 * retry with it runs again.
 */
function isFinal(answer: StoredResponse): boolean {
  if (answer.status >= 500) return false;
  if (answer.status !== 409) return true;
  try {
    return (JSON.parse(answer.body.toString('utf8')) as { code?: unknown } | null)?.code !== 'idempotency_in_progress';
  } catch {
    return true;
  }
}

/** Answers a stored response again, marked `Idempotent-Replayed: true`. */
function replay(res: Response, response: StoredResponse): void {
  res.set(response.headers);
  res.set('Idempotent-Replayed', 'true');
  res.status(response.status).send(response.body);
}

/**
 * The replay-only step (`replayOnly: true`), placed before ownership on routes whose resource
 * moves: a replace or re-issue retires the cardKey of its path, so a retry of it would meet 404
 * `not_found` at the ownership step. This step answers the stored first response when, and only
 * when, the same partner (from the verified token) completed the same route with the same key and
 * the same request (body compared as the route's validate step will have it). Anything else
 * (no key, a malformed one, another partner, another body, still running, nothing stored) goes
 * on unchanged to ownership, validation and the ordinary idempotency step.
 */
function replayOnly(params: IdempotencyParams, { db }: IdempotencyServices): RequestHandler {
  const store = new IdempotencyStore(db);
  const bodySchema = params.body ? validatorOnFirstUse(bodyAjv, SCHEMAS[params.body]) : undefined;
  return function idempotencyReplay(req, res, next) {
    const header = req.headers['idempotency-key'];
    const key = Array.isArray(header) ? header[0] : header;
    const partnerId = req.partner?._id;
    if (key === undefined || !KEY.test(key) || partnerId === undefined) return next();
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
    store.completedResponse(partnerId, key, route, requestHash(route, req.params, body)).then(
      (stored) => (stored ? replay(res, stored) : next()),
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
  const { db, log } = services;
  const store = new IdempotencyStore(db);
  const keeper = claimKeeper(db, log);
  const ttlHours = params.ttlHours ?? 24;
  return function idempotencyCheck(req, res, next) {
    const header = req.headers['idempotency-key'];
    if (header === undefined) return next();
    const key = Array.isArray(header) ? header[0] : header;
    if (!KEY.test(key)) {
      next(new GatewayError('validation_failed', 'Idempotency-Key must be 1 to 255 visible ASCII characters', {
        invalidParams: [{ name: 'Idempotency-Key', reason: 'must be 1 to 255 visible ASCII characters' }],
      }));
      return;
    }
    const partnerId = req.partner!._id;
    const route = `${req.method} ${req.baseUrl}${req.path}`;
    const hash = requestHash(route, req.params, req.body);
    store.claim(partnerId, key, route, hash, ttlHours).then(
      (claim) => {
        switch (claim.outcome) {
          case 'mismatch':
            return next(new GatewayError('idempotency_key_reused', 'This Idempotency-Key was used with a different request'));
          case 'in_progress':
            return next(new GatewayError('idempotency_in_progress', 'A request with this Idempotency-Key is still running; retry shortly', {
              headers: { 'Retry-After': '1' },
            }));
          case 'replay':
            replay(res, claim.response);
            return;
          case 'claimed': {
            // Held (heartbeat) until the handler's outcome is recorded, even if the client goes
            // away meanwhile: a retry then gets 409 idempotency_in_progress, then the replay.
            keeper.hold(claim.claim);
            // The upstream call of this operation carries this id on every retry (docs/upstreams.md).
            req.upstreamOperation = { id: claim.claim.operationId, resumed: claim.claim.resumed };
            recordBeforeEnding(
              res,
              (answer) => keeper.settle(claim.claim, isFinal(answer) ? { kind: 'complete', response: answer } : { kind: 'release' }),
              (err) => log.error({ err, requestId: req.requestId }, 'idempotency key not recorded yet: retried in the background')
            );
            return next();
          }
        }
      },
      (err: unknown) => next(err)
    );
  };
}
