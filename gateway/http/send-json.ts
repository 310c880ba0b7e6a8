import type { Response } from 'express';
import { endAnswer, JSON_CONTENT_TYPE } from './answer';

/**
 * The proxy's way into the answer writer (gateway/http/answer.ts): a JSON answer with the headers
 * `writeAnswer` gives it in the partner app (`etag` and `x-powered-by` off):
 * `Content-Type: application/json; charset=utf-8` and `Content-Length`; no body for a HEAD request;
 * the response's answer hook, if any, runs before the bytes leave (`endAnswer`). It allocates no
 * answer object and checks no request freshness (a proxied read is never answered 304): Express's
 * `send` on the hot answers reparses the content type, checks freshness and goes through
 * `set`/`status`, about 5 % of a proxied read's CPU, for the same bytes.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  sendText(res, status, JSON_CONTENT_TYPE, JSON.stringify(body));
}

/** {@link sendJson}'s way with any text: the status, `Content-Type`, `Content-Length`, then the answer hook and the bytes. */
export function sendText(res: Response, status: number, contentType: string, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  endAnswer(res, text);
}
