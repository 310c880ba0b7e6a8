import type { Response } from 'express';
import { endAnswer } from './answer';

/**
 * Writes a JSON answer with the headers `res.status(status).json(body)` gives it under this app's
 * settings (`etag` and `x-powered-by` off): `Content-Type: application/json; charset=utf-8` and
 * `Content-Length`; no body for a HEAD request. Express's `send` on the hot answers reparses the
 * content type, checks request freshness (always stale without ETag and Last-Modified) and goes
 * through `set`/`status`: about 5 % of a proxied read's CPU, for the same bytes. The response's
 * answer hook, if any, runs before the bytes leave (`endAnswer`).
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  sendText(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

/** {@link sendJson}'s way with any text: the status, `Content-Type`, `Content-Length`, then the answer hook and the bytes. */
export function sendText(res: Response, status: number, contentType: string, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  endAnswer(res, text);
}
