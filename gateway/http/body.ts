import type { IncomingMessage } from 'node:http';
import express, { type NextFunction, type Request, type RequestHandler } from 'express';
import { GatewayError } from '../errors';

/** Largest accepted request body (spec bodies are small; 413 above it). */
export const BODY_LIMIT = '64kb';
// BODY_LIMIT in bytes: the whitespace of a body of another media type read before it counts as content.
const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Deepest nesting of arrays and objects accepted in a JSON body (the deepest spec body, a limits
 * patch, has 2 levels; an admin config body about 10). Deeper → 400 `body_too_deep`.
 */
export const MAX_BODY_DEPTH = 32;

/**
 * The nesting depth of a parsed JSON value (a scalar is 0, `[]` and `{}` are 1), counted without
 * recursion and stopping as soon as it exceeds `limit`, so any depth costs no stack.
 *
 * @example jsonDepth([[1], { a: {} }]) // 3
 */
export function jsonDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.value === null || typeof item.value !== 'object') continue;
    const depth = item.depth + 1;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    const children = Array.isArray(item.value) ? item.value : Object.values(item.value as Record<string, unknown>);
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth });
    }
  }
  return deepest;
}

/**
 * Whether `bytes` hold anything but JSON's insignificant whitespace (RFC 8259: space, tab, line
 * feed, carriage return) and, when they are the start of a body (`atStart`, the default), a UTF-8
 * byte order mark before it (which the JSON parser drops: a body of only a BOM parses as `{}`). A
 * JSON body's first byte answers it, so it costs nothing per request.
 *
 * @example holdsContent(Buffer.from(' \r\n')) // false
 * @example holdsContent(Buffer.from('\uFEFF')) // false
 */
export function holdsContent(bytes: Uint8Array, atStart = true): boolean {
  const from = atStart && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  for (let i = from; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return true;
  }
  return false;
}

/**
 * Whether the request carried a body with content, as the partner app's body parser recorded it
 * (`jsonBody({ recordReceived: true })`): false for no body at all, `Content-Length: 0`, a chunked
 * body of no bytes and a body of only whitespace, whatever its media type; false too on a request
 * that parser did not see. The validate policy refuses a body-taking operation's request without
 * one (400 `body_required`): body-parser hands `{}` for "no body" and for `{}` alike.
 */
export function carriesBody(req: Request): boolean {
  return req.bodyReceived === true;
}

/** Options of {@link jsonBody}. */
export interface JsonBodyOptions {
  /**
   * Record on each request whether it carried a body with content (`req.bodyReceived`, read by
   * {@link carriesBody}): a JSON body's bytes are looked at as they are parsed (body-parser's
   * `verify` hook, no second read), a body of only whitespace is no body rather than malformed
   * JSON, and a body of another media type is read only as far as its first byte that is not
   * whitespace, then discarded. Default false (the admin API): nothing is recorded, a body of only
   * whitespace is malformed JSON and a body of another media type is never read.
   */
  recordReceived?: boolean;
}

/**
 * Parses JSON bodies (`application/json` and `application/*+json`) up to 64 KB, strictly (objects
 * and arrays only). Malformed JSON → 400, too large → 413, nested deeper than
 * {@link MAX_BODY_DEPTH} → 400 `body_too_deep`, via the problem handler. The depth is checked right
 * after parsing, before any policy or handler walks the body (validation, hashing, cloning). With
 * `recordReceived`, it also records whether the request carried a body at all ({@link JsonBodyOptions}).
 */
export function jsonBody(options: JsonBodyOptions = {}): RequestHandler {
  const recordReceived = options.recordReceived === true;
  const parse = express.json({
    limit: BODY_LIMIT,
    strict: true,
    type: ['application/json', 'application/*+json'],
    ...(recordReceived ? { verify: recordJsonContent } : {}),
  });
  return function parseJsonBody(req, res, next) {
    parse(req, res, (err?: unknown) => {
      if (err !== undefined) {
        // Only whitespace is no JSON text at all, which the strict parser refuses: it is no body
        // (req.body stays body-parser's `{}`, as for an empty one).
        if (recordReceived && req.bodyReceived === false && (err as { type?: unknown }).type === 'entity.parse.failed') return next();
        return next(err);
      }
      if (recordReceived && req.bodyReceived === undefined && declaresBody(req)) return scanUnparsedBody(req, next);
      if (req.body !== null && typeof req.body === 'object' && jsonDepth(req.body, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
        // The parsed body is dropped: nothing downstream may walk it.
        req.body = undefined;
        return next(new GatewayError('body_too_deep', `The request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`));
      }
      next();
    });
  };
}

/** body-parser's `verify` hook: called with the raw bytes of every JSON body it reads, before parsing. */
function recordJsonContent(req: IncomingMessage, _res: unknown, bytes: Buffer): void {
  (req as Request).bodyReceived = holdsContent(bytes);
}

/** A request whose headers announce a body of at least one byte (chunked, or a Content-Length above 0). */
function declaresBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0;
}

/**
 * A body of another media type than JSON (or none declared), which nothing in the gateway parses:
 * read only until its first byte that is not whitespace (then the rest is let through unread and
 * discarded), or to its end, or past 64 KB of whitespace, to record whether it holds anything. No
 * byte is kept. The validate policy then answers 415 to a body with content and 400 `body_required`
 * to one of only whitespace, as to an empty one.
 */
function scanUnparsedBody(req: Request, next: NextFunction): void {
  let scanned = 0;
  let settled = false;
  const settle = (received: boolean, err?: unknown) => {
    if (settled) return;
    settled = true;
    req.bodyReceived = received;
    next(err);
  };
  req.on('data', (chunk: Buffer) => {
    if (settled) return;
    const atStart = scanned === 0;
    scanned += chunk.length;
    if (holdsContent(chunk, atStart) || scanned > BODY_LIMIT_BYTES) settle(true);
  });
  req.on('end', () => settle(false));
  req.on('error', () => settle(false, Object.assign(new Error('request aborted'), { type: 'request.aborted' })));
}
