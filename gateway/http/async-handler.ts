import type { Request, RequestHandler, Response } from 'express';
import type { CallContext } from '../upstreams';

/** Wraps an async handler so that a rejection reaches the problem writer through `next(err)`. */
export function asyncHandler(handler: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return function runAsyncHandler(req, res, next) {
    handler(req, res).catch(next);
  };
}

/** The upstream call context of a request: its id is forwarded, its upstream time is logged. */
export function callContext(req: Request, res: Response): CallContext {
  return { requestId: req.requestId, timing: res.locals };
}
