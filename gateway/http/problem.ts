import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { GatewayError, PROBLEM_TYPE_BASE, type InvalidParam } from '../errors';
import type { Logger } from '../logging/logger';
import { isUnavailableError } from '../db/database';
import { recordAuthRefusal } from '../metrics';
import { containsCardNumber, memberHoldsCardNumber } from '../upstreams/card-data';
import { writeAnswer } from './answer';

const NO_STORE = { 'Cache-Control': 'no-store' } as const;

/** An RFC 9457 problem document as the gateway writes it. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  invalidParams?: InvalidParam[];
  [extension: string]: unknown;
}

/** Maps anything thrown in a pipeline to a GatewayError (unknown errors become a bare 500). */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as { type?: string; status?: number; statusCode?: number } | undefined;
  // body-parser errors carry a `type`.
  if (e?.type === 'entity.parse.failed') return new GatewayError('malformed_json', 'The request body is not valid JSON');
  if (e?.type === 'entity.too.large') return new GatewayError('payload_too_large', 'The request body exceeds 64 KB');
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    return new GatewayError('unsupported_media_type', 'Only UTF-8 JSON bodies are accepted');
  }
  if (e?.type === 'request.aborted') return new GatewayError('validation_failed', 'The request body was aborted');
  // Other client errors raised by express and body-parser (an undecodable %-escape in the path, a
  // body whose content-encoding lies, ...) carry their HTTP status: they are the caller's fault.
  const status = e?.status ?? e?.statusCode;
  if (status === 413) return new GatewayError('payload_too_large', 'The request body exceeds 64 KB');
  if (status === 415) return new GatewayError('unsupported_media_type', 'The request body encoding or charset is not supported');
  if (typeof status === 'number' && status >= 400 && status < 500) return new GatewayError('validation_failed', 'The request is malformed');
  // PostgreSQL refusing a character (U+0000, invalid encoding): the caller's input, never a 500.
  const sqlState = (err as { code?: unknown } | undefined)?.code;
  if (sqlState === '22021' || sqlState === '22P05') return new GatewayError('validation_failed', 'The request holds a character that cannot be stored');
  if (isUnavailableError(err)) return new GatewayError('database_unavailable', 'The database is unavailable; retry shortly', { headers: { 'Retry-After': '1' } });
  return new GatewayError('internal_error', 'An internal error occurred; quote the requestId to support');
}

/**
 * The last guard before a problem leaves: a detail that holds a card number (a Luhn-valid run of
 * 13 to 19 digits, wherever it came from) is replaced by the title, extension members holding one
 * are dropped, and so are such names or reasons of `invalidParams` (docs/errors.md).
 */
function withoutCardNumbers(error: GatewayError): Pick<Problem, 'detail' | 'invalidParams'> & { extensions: Record<string, unknown> } {
  // Identifier members (a cardKey, a config hash) only when they are a card number by themselves:
  // random hex holds Luhn-valid digit runs by chance (a reload's rejectedHash was dropped so).
  const extensions = Object.fromEntries(Object.entries(error.extensions ?? {}).filter(([name, value]) => !(typeof value === 'string' && memberHoldsCardNumber(name, value))));
  const invalidParams = error.invalidParams?.map((p) => ({
    name: containsCardNumber(p.name) ? '(a field name holding a card number)' : p.name,
    reason: containsCardNumber(p.reason) ? 'is invalid' : p.reason,
  }));
  return { detail: containsCardNumber(error.message) ? error.title : error.message, invalidParams, extensions };
}

/** Writes a GatewayError as `application/problem+json` (`Cache-Control: no-store`), through the answer writer. The only writer of error responses. */
export function sendProblem(res: Response, requestId: string, error: GatewayError): void {
  const { detail, invalidParams, extensions } = withoutCardNumbers(error);
  const body: Problem = {
    ...extensions,
    type: `${PROBLEM_TYPE_BASE}${error.code}`,
    title: error.title,
    status: error.status,
    detail,
    code: error.code,
    requestId,
  };
  if (invalidParams) body.invalidParams = invalidParams;
  writeAnswer(res, {
    status: error.status,
    headers: error.headers === undefined ? NO_STORE : { ...error.headers, ...NO_STORE },
    bytes: JSON.stringify(body),
    contentType: 'application/problem+json; charset=utf-8',
  });
}

/** Terminal 404 for a path or method no pipeline serves. */
export function notFound(): RequestHandler {
  return function routeNotFound(req, _res, next) {
    next(new GatewayError('route_not_found', `No route serves ${req.method} ${req.path}`));
  };
}

/**
 * The terminal error handler: every `next(err)` ends here. Stack traces and upstream bodies are
 * logged (redacted) at most, never sent.
 */
export function problemHandler(log: Logger): ErrorRequestHandler {
  return function writeProblem(err, req, res, _next) {
    const error = toGatewayError(err);
    if (error.status >= 500) log.error({ err, requestId: req.requestId, code: error.code }, 'request failed');
    if (error.status === 401) recordAuthRefusal(error.code);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendProblem(res, req.requestId, error);
  };
}
