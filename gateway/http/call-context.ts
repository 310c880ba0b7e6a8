import type { Request, Response } from 'express';
import type { CallContext } from '../upstreams';

/** The upstream call context of a request: its id is forwarded, its upstream time is logged. */
export function callContext(req: Request, res: Pick<Response, 'locals'>): CallContext {
  return { requestId: req.requestId, timing: res.locals };
}
