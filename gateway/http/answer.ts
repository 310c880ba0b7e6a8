import type { Response } from 'express';

/** What an answer hook sees: the status and the exact bytes about to be sent (its headers are set on `res`). */
export interface Answer {
  status: number;
  body: Buffer;
}

/** The headers of a handler's answer, by name (`Content-Length` is the writer's). */
export type AnswerHeaders = Readonly<Record<string, string>>;

interface AnswerHead {
  status: number;
  headers?: AnswerHeaders;
}

/** A JSON answer: `body` as `JSON.stringify` writes it, `Content-Type: application/json; charset=utf-8`. */
export interface JsonAnswer extends AnswerHead {
  body: unknown;
  bytes?: never;
  contentType?: never;
}

/**
 * Bytes answered as they are (a text, an HTML page, a JSON text assembled already, a gzip body), with
 * the full `Content-Type` to send (charset included: the writer adds none). Without `contentType`,
 * the one of `headers` (a recorded answer's), else `application/octet-stream`.
 */
export interface BytesAnswer extends AnswerHead {
  bytes: string | Buffer;
  contentType?: string;
  body?: never;
}

/** An answer without a body (204, 304): the status and the headers. */
export interface EmptyAnswer extends AnswerHead {
  body?: never;
  bytes?: never;
  contentType?: never;
}

/**
 * What a handler returns (gateway/handlers/context.ts), and what every answer of the gateway's Express
 * applications is written from, by {@link writeAnswer}: a JSON body by default, bytes with their
 * content type, or none.
 *
 * @example return { status: 201, body: card, headers: { Location: `/cards/${card.cardKey}` } };
 * @example return { status: 200, bytes: 'OK', contentType: 'text/plain; charset=utf-8' };
 * @example return { status: 204 };
 */
export type HandlerAnswer = JsonAnswer | BytesAnswer | EmptyAnswer;

/** The content type of every JSON answer. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Runs once, when the answer of a response is written, before its bytes leave: the answer is held
 * until the returned promise settles (either way). The idempotency policy records the answer of a
 * claimed key here, so that a retry right after it is replayed the same bytes.
 */
export type AnswerHook = (answer: Answer, res: Response) => Promise<void>;

const HOOK = Symbol('answer hook');
type Hooked = Response & { [HOOK]?: AnswerHook | 'answered' };

/**
 * Registers the answer hook of a response (one per response). Every answer is written through
 * {@link endAnswer}, which runs it: {@link writeAnswer} (handlers, the admin API, idempotency's
 * replays, the problem writer) and `sendJson` (the proxy).
 */
export function beforeAnswer(res: Response, hook: AnswerHook): void {
  const hooked = res as Hooked;
  if (hooked[HOOK] !== undefined) throw new Error('a response has one answer hook');
  hooked[HOOK] = hook;
}

/** Whether an answer hook waits for this response's answer. */
export function awaitsAnswer(res: Response): boolean {
  return typeof (res as Hooked)[HOOK] === 'function';
}

/** Whether this response's answer went through its answer hook (false: none registered, or written past it). */
export function answeredThroughHook(res: Response): boolean {
  return (res as Hooked)[HOOK] === 'answered';
}

const NO_BYTES = Buffer.alloc(0);

/**
 * Ends a response whose status and headers are set with `body` (none: `res.end()`): at once without
 * an answer hook, otherwise once its hook has run. No body is written for a HEAD request.
 */
export function endAnswer(res: Response, body: string | Buffer | undefined): void {
  const hooked = res as Hooked;
  const hook = hooked[HOOK];
  const write = (): void => {
    if (body === undefined || res.req.method === 'HEAD') res.end();
    else res.end(body);
  };
  if (typeof hook !== 'function') return write();
  hooked[HOOK] = 'answered';
  const bytes = body === undefined ? NO_BYTES : typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  hook({ status: res.statusCode, body: bytes }, res).then(write, write);
}

/** Express's ETag generator of the response's application (`etag` setting; none where it is off, as in the partner app). */
type EtagOf = (body: string | Buffer, encoding?: BufferEncoding) => string | undefined;

/**
 * The one writer of answers: writes a {@link HandlerAnswer} with the bytes and headers Express's
 * `res.json`/`res.send` give it under the response's application, and runs the response's answer
 * hook (idempotency) before the bytes leave; the access log and the metrics read the finished
 * response. In order: the status, the answer's headers, `Content-Type`, `Content-Length`, an ETag
 * where the application generates them (the admin API) and the answer sets none; then a fresh
 * conditional GET or HEAD (`req.fresh`) is answered 304, and a 204 or 304 without
 * `Content-Type`, `Content-Length` and body. An {@link EmptyAnswer} is the status and headers only
 * (`res.status(204).end()`). No body is written for a HEAD request.
 */
export function writeAnswer(res: Response, answer: HandlerAnswer): void {
  res.statusCode = answer.status;
  const headers = answer.headers;
  if (headers !== undefined) for (const name of Object.keys(headers)) res.setHeader(name, headers[name]!);
  let bytes: string | Buffer;
  if (answer.bytes !== undefined) {
    bytes = answer.bytes;
    if (answer.contentType !== undefined) res.setHeader('Content-Type', answer.contentType);
    else if (res.getHeader('Content-Type') === undefined) res.setHeader('Content-Type', 'application/octet-stream');
  } else if ('body' in answer) {
    bytes = JSON.stringify(answer.body);
    res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  } else {
    endAnswer(res, undefined);
    return;
  }
  res.setHeader('Content-Length', typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length);
  const etagOf = res.app?.get('etag fn') as EtagOf | undefined;
  if (etagOf !== undefined && res.getHeader('ETag') === undefined) {
    const etag = etagOf(bytes, 'utf8');
    if (etag) res.setHeader('ETag', etag);
  }
  if (res.req.fresh) res.statusCode = 304;
  if (res.statusCode === 204 || res.statusCode === 304) {
    res.removeHeader('Content-Type');
    res.removeHeader('Content-Length');
    res.removeHeader('Transfer-Encoding');
    bytes = '';
  }
  endAnswer(res, bytes);
}

/**
 * A recorded answer (idempotency's, gateway/idempotency) answered again: its status, its recorded
 * headers (its content type among them) and `Idempotent-Replayed: true`, its exact bytes.
 */
export function replayedAnswer(recorded: { status: number; body: Buffer; headers: Readonly<Record<string, string>> }): HandlerAnswer {
  return { status: recorded.status, headers: { ...recorded.headers, 'Idempotent-Replayed': 'true' }, bytes: recorded.body };
}
