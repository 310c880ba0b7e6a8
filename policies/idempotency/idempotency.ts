import crypto from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { GatewayError } from '../../gateway/errors';
import { IdempotencyStore } from '../../gateway/idempotency/idempotency-store';
import { services } from '../../gateway/services';
import type { IdempotencyParams } from './schema';

const KEY = /^[\x21-\x7e]{1,255}$/;

/** JSON with object keys sorted, so that the same body always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * Holds the first `res.send` of the request until its outcome is recorded: a final response is
 * stored before the partner sees it (so a retry right after always replays it), a 5xx releases
 * the key first (so a retry runs again).
 */
function recordBeforeSending(res: Response, record: (status: number, body: unknown) => Promise<void>, onError: (err: unknown) => void): void {
  const send = res.send.bind(res);
  let intercepted = false;
  res.send = function sendAfterRecording(body?: unknown) {
    if (intercepted) return send(body);
    intercepted = true;
    let parsed: unknown = body ?? null;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      try {
        parsed = JSON.parse(body.toString());
      } catch {
        parsed = null;
      }
    }
    record(res.statusCode, parsed).then(
      () => send(body),
      (err: unknown) => {
        onError(err);
        send(body);
      }
    );
    return res;
  };
}

/**
 * The idempotency policy (after validation, before the handler). Without the header the request
 * runs as usual. With it: the first request runs and its final response is stored; the same key
 * with the same body replays it (`Idempotent-Replayed: true`); with another body → 409
 * `idempotency_key_reused`; while the first is still running → 409 `idempotency_in_progress` with
 * `Retry-After`. Responses of 5xx (an upstream or database failure) release the key so that the
 * partner can retry with it.
 */
export function idempotency(params: IdempotencyParams): RequestHandler {
  const store = new IdempotencyStore(services().db);
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
    const hash = crypto.createHash('sha256').update(canonical({ route, params: req.params, body: req.body })).digest('hex');
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
            res.set('Idempotent-Replayed', 'true');
            res
              .status(claim.response.status)
              .type(claim.response.status >= 400 ? 'application/problem+json' : 'application/json')
              .send(JSON.stringify(claim.response.body));
            return;
          case 'claimed': {
            recordBeforeSending(
              res,
              (status, body) => (status >= 500 ? store.release(partnerId, key) : store.complete(partnerId, key, { status, body })),
              (err) => services().log.error({ err, requestId: req.requestId }, 'idempotency key not recorded')
            );
            res.on('close', () => {
              // The client went away before a response was written: let a retry run again.
              if (!res.writableFinished) store.release(partnerId, key).catch(() => undefined);
            });
            return next();
          }
        }
      },
      (err: unknown) => next(err)
    );
  };
}
