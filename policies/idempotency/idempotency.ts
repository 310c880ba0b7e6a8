import crypto from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { GatewayError } from '../../gateway/errors';
import { IdempotencyStore, type StoredResponse } from '../../gateway/idempotency/idempotency-store';
import { SCHEMAS } from '../../gateway/schemas';
import { services } from '../../gateway/services';
import { assertValid, bodyAjv } from '../../gateway/validation/ajv';
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

/** The hash a request is recognised by: its route (method and path), path parameters and body. */
function requestHash(route: string, params: unknown, body: unknown): string {
  return crypto.createHash('sha256').update(canonical({ route, params, body })).digest('hex');
}

/** Answers a stored response again, marked `Idempotent-Replayed: true`. */
function replay(res: Response, response: StoredResponse): void {
  res.set('Idempotent-Replayed', 'true');
  res
    .status(response.status)
    .type(response.status >= 400 ? 'application/problem+json' : 'application/json')
    .send(JSON.stringify(response.body));
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
function replayOnly(params: IdempotencyParams): RequestHandler {
  const store = new IdempotencyStore(services().db);
  const bodySchema = params.body ? bodyAjv.getSchema(SCHEMAS[params.body].$id) ?? bodyAjv.compile(SCHEMAS[params.body]) : undefined;
  return function idempotencyReplay(req, res, next) {
    const header = req.headers['idempotency-key'];
    const key = Array.isArray(header) ? header[0] : header;
    const partnerId = req.partner?._id;
    if (key === undefined || !KEY.test(key) || partnerId === undefined) return next();
    let body: unknown = req.body ?? {};
    if (bodySchema) {
      try {
        body = assertValid(bodySchema, structuredClone(body), 'body');
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
 * `Retry-After`. Responses of 5xx (an upstream or database failure) release the key so that the
 * partner can retry with it.
 */
export function idempotency(params: IdempotencyParams): RequestHandler {
  if (params.replayOnly) return replayOnly(params);
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
