import type { Response } from 'express';

/** What an answer hook sees: the status and the exact bytes about to be sent (its headers are set on `res`). */
export interface Answer {
  status: number;
  body: Buffer;
}

/**
 * Runs once, when the answer of a response is written, before its bytes leave: the answer is held
 * until the returned promise settles (either way). The idempotency policy records the answer of a
 * claimed key here, so that a retry right after it is replayed the same bytes.
 */
export type AnswerHook = (answer: Answer, res: Response) => Promise<void>;

const HOOK = Symbol('answer hook');
type Hooked = Response & { [HOOK]?: AnswerHook | 'answered' };

/**
 * Registers the answer hook of a response (one per response). The gateway's answer writers run it:
 * {@link endAnswer}, and so `sendJson` (handlers of the routes that take an Idempotency-Key, the
 * proxy) and `sendProblem` (every error answer).
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

/**
 * Ends a response whose status and headers are set with `body`: at once without an answer hook,
 * otherwise once its hook has run. No body is written for a HEAD request.
 */
export function endAnswer(res: Response, body: string | Buffer): void {
  const hooked = res as Hooked;
  const hook = hooked[HOOK];
  const write = (): void => {
    if (res.req.method === 'HEAD') res.end();
    else res.end(body);
  };
  if (typeof hook !== 'function') return write();
  hooked[HOOK] = 'answered';
  hook({ status: res.statusCode, body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body }, res).then(write, write);
}
