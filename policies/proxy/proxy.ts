import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { findCard } from '../../gateway/cards/card-store';
import { GatewayError } from '../../gateway/errors';
import { sendJson } from '../../gateway/http/send-json';
import { auditUpstreamFailure, auditUpstreamSuccess, upstreamCallOnCard, type UpstreamCallAudit } from '../../gateway/upstreams/call-audit';
import { rsaModulusBytes } from '../../gateway/upstreams/card-data';
import { mapUpstreamFailure } from '../../gateway/upstreams/failures';
import type { CallSignal } from '../../gateway/upstreams/http-client';
import { compilePath, pickQuery, proxiedBody } from '../../gateway/upstreams/request-parts';
import { RESPONSE_TRANSFORM_TABLE, UnusableAnswerError, type ResponseTransform, type TransformContext } from './transforms';
import type { Queryable } from '../../gateway/db/database';
import type { PolicyContext } from '../policy';
import type { ProxyParams } from './schema';
import type { Logger } from '../../gateway/logging/logger';
import type { UpstreamClients } from '../../gateway/upstreams';

/** What the upstream call needs of the gateway's services. */
export interface ProxyServices {
  clients: UpstreamClients;
  db: Queryable;
  log: Logger;
}

/**
 * The proxy policy (`upstream-proxy` in YAML): ends a pipeline in one call to an upstream, made
 * with that upstream's shared client (the services' `clients.http`: its keep-alive pool, timeout,
 * retry rule, size cap and failure mapping, gateway/upstreams/http-client.ts), and answers the
 * named transform of the upstream's JSON. Set-up happens once here: the path template, the
 * transform and the client.
 *
 * Per request: only `accept`, `x-request-id`, and `content-type`/`content-length` for a body go
 * upstream; only the listed query parameters; the validated body re-serialised with `setBody`
 * over it. Failures become the GatewayError of `mapUpstreamFailure` (never the upstream body).
 * With `audit`, an audit entry is written before the answer (a failed write fails it), and a
 * failed call is audited as a failure.
 */
export function upstreamProxy(params: ProxyParams, { services }: PolicyContext<ProxyServices>): RequestHandler {
  const { clients, db, log } = services;
  const upstream = params.upstream;
  const client = clients.http[upstream];
  if (!client) throw new Error(`upstream-proxy: no client for upstream "${String(upstream)}"`);
  const path = compilePath(params.path);
  const queryNames = params.query ?? [];
  const bodyMode = params.body ?? 'forward';
  const setBody = params.setBody;
  const timeoutMs = params.timeoutMs;
  const transform = RESPONSE_TRANSFORM_TABLE[params.response];
  if (!transform) throw new Error(`upstream-proxy: unknown response transform "${String(params.response)}"`);
  const auditOperation = params.audit;

  /** The audit entry of this request's call, when the route is audited. */
  function auditedCall(req: Request): UpstreamCallAudit | undefined {
    if (!auditOperation) return undefined;
    const owner = req.ownership;
    if (!owner) throw new Error(`upstream-proxy: audit "${auditOperation}" needs the ownership policy before the proxy`);
    return upstreamCallOnCard(owner, auditOperation, req.params.id, req.requestId);
  }

  async function answer(req: Request, res: Response, upstreamPath: string, signal: CallSignal): Promise<void> {
    const method = params.method ?? (req.method as NonNullable<ProxyParams['method']>);
    const upstreamAnswer = await client.request<unknown>(
      { requestId: req.requestId, timing: res.locals },
      {
        method,
        path: upstreamPath,
        query: queryNames.length > 0 ? pickQuery(req.query as Record<string, unknown>, queryNames) : undefined,
        body: proxiedBody(method, bodyMode, req.body, setBody),
        fieldsCheckedByCaller: true,
        timeoutMs,
        signal,
      },
    );
    const result = partnerAnswer(upstream, transform, upstreamAnswer, await transformContext(db, transform, req));
    const call = auditedCall(req);
    // Before the answer: a card secret the gateway could not audit is not revealed.
    if (call) await auditUpstreamSuccess(db, call);
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, 200, result);
  }

  return function upstreamProxyStep(req, res, next) {
    let upstreamPath: string;
    try {
      upstreamPath = path.build(req.params);
    } catch (err) {
      next(new GatewayError('internal_error', undefined, { cause: err }));
      return;
    }
    // The partner left before the upstream answered: stop waiting, free the socket, answer nobody.
    const partnerGone = new PartnerGone();
    let done = false;
    res.on('close', () => {
      if (!done) partnerGone.abort();
    });
    answer(req, res, upstreamPath, partnerGone).then(
      () => {
        done = true;
      },
      (err: unknown) => {
        done = true;
        if (partnerGone.aborted) return;
        failed(req, err, next);
      },
    );
  };

  /** Passes the problem on (one problem writer: next(err)), after the failure audit of an audited route. */
  function failed(req: Request, err: unknown, next: NextFunction): void {
    let call: UpstreamCallAudit | undefined;
    try {
      call = auditedCall(req);
    } catch (setupError) {
      next(setupError);
      return;
    }
    if (!call) next(err);
    else void auditUpstreamFailure(db, log, call, err).finally(() => next(err));
  }
}

/**
 * The partner left before the upstream answered: a flag and the one abort listener of the exchange
 * in flight (http-client.ts adds it and removes it when the exchange settles), rather than an
 * `AbortController`, which would make an EventTarget and an AbortSignal per request
 * (docs/performance.md, "The hot path").
 */
export class PartnerGone implements CallSignal {
  aborted = false;
  private listener: (() => void) | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    this.listener = listener;
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    if (this.listener === listener) this.listener = undefined;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }
}

/** What the transform needs besides the answer: the size of the partner's securityKey, our stored card. */
async function transformContext(db: Queryable, transform: ResponseTransform, req: Request): Promise<TransformContext> {
  const context: TransformContext = {};
  if (transform.needsSecurityKey) {
    const securityKey = (req.query as Record<string, unknown>).securityKey;
    context.revealKeyBytes = typeof securityKey === 'string' ? rsaModulusBytes(securityKey) : undefined;
  }
  if (transform.needsStoredCard) {
    context.storedCard = await findCard(db, req.params.id);
    if (!context.storedCard) throw new GatewayError('not_found', 'No card has this id');
  }
  return context;
}

/** The partner's answer; an upstream answer without the documented shape is the upstream's fault (502). */
function partnerAnswer(upstream: ProxyParams['upstream'], transform: ResponseTransform, upstreamAnswer: unknown, context: TransformContext): unknown {
  try {
    return transform.apply(upstreamAnswer, context);
  } catch (err) {
    if (err instanceof UnusableAnswerError) throw mapUpstreamFailure(upstream, { kind: 'malformed', cardData: err.cardData }, { cause: err });
    throw err;
  }
}
