import express, { type Application, type RequestHandler } from 'express';
import Ajv, { type AnySchema, type ValidateFunction } from 'ajv';
import { GatewayError, type InvalidParam } from '../errors';
import { isObjectId } from '../ids';
import type { Logger } from '../logging/logger';
import { jsonBody } from '../http/body';
import { notFound, problemHandler } from '../http/problem';
import { requestContext } from '../http/request-context';
import { replayedAnswer, writeAnswer, type HandlerAnswer } from '../http/answer';
import { PartnerStoreError, type PartnerStore } from '../partners/partner-store';
import { PublicKeyError } from '../partners/public-key';
import { tokenMatches } from './admin-token';
import { withSharedMetaSchema } from '../validation/shared-meta-schema';
import { recordAudit } from '../audit/audit-log';
import type { WebhookEndpointStore } from '../webhooks/endpoint-store';
import type { AuthorizationEndpointServices } from '../authorizations';
import type { Database } from '../db/database';
import type { UpstreamClients } from '../upstreams';
import { containsCardNumber } from '../upstreams/card-data';
import { OPERATOR_STATUS_CHANGES, operatorStatusChange, type OperatorStatus } from '../catalog';
import { CARD_KEY } from '../ids';
import { applyStatusChange, type CardStatusResult } from '../cards/status-change';
import type { CardStateFollowers } from '../cards/card-state-listener';
import { KeyClaimStore, OPERATOR_KEYS, idempotencyKeyOf, jsonAnswer, requestHash, type KeyClaim } from '../idempotency/key-claims';
import { markIssuerCheckDue } from '../cards/card-sync';
import { upstreamOperationId } from '../idempotency/operation-id';

const ajv = withSharedMetaSchema(new Ajv({ allErrors: true }));

/**
 * An operator request body's validator, compiled at its first use, not when this module loads: a
 * start compiles none of them, nor the draft-07 meta-schema the first compile checks its schema
 * against (about 60 ms of CPU at every start, for endpoints many instances never receive).
 */
function compiledOnFirstUse(schema: AnySchema): () => ValidateFunction {
  let validate: ValidateFunction | undefined;
  return () => (validate ??= ajv.compile(schema));
}

const KID = { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' };
const validators = {
  createPartner: compiledOnFirstUse({
    type: 'object',
    additionalProperties: false,
    required: ['name', 'issuer', 'publicKey'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      issuer: { type: 'string', minLength: 1, maxLength: 500 },
      publicKey: { type: 'string', minLength: 1, maxLength: 10000 },
      kid: KID,
    },
  }),
  addKey: compiledOnFirstUse({
    type: 'object',
    additionalProperties: false,
    required: ['publicKey'],
    properties: { publicKey: { type: 'string', minLength: 1, maxLength: 10000 }, kid: KID },
  }),
  updatePartner: compiledOnFirstUse({
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { status: { enum: ['active', 'disabled'] }, processingEnabled: { type: 'boolean' }, tokenizeBeforeActivation: { type: 'boolean' } },
  }),
  addTenant: compiledOnFirstUse({
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: { type: 'string', minLength: 1, maxLength: 200 } },
  }),
  updateWebhookEndpoint: compiledOnFirstUse({
    type: 'object',
    additionalProperties: false,
    required: ['status'],
    properties: { status: { enum: ['enabled', 'disabled'] } },
  }),
  empty: compiledOnFirstUse({ type: 'object', additionalProperties: false, maxProperties: 0 }),
  cardStatus: compiledOnFirstUse({
    type: 'object',
    additionalProperties: false,
    required: ['status', 'reason'],
    properties: {
      status: { enum: Object.keys(OPERATOR_STATUS_CHANGES) },
      // An operator's change must be explained: at least one character that is not a space.
      reason: { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S' },
    },
  }),
};

/** The audit operation of an operator disabling a partner's decision endpoint (the partner's own change is `authorization.endpoint.update`). */
export const ADMIN_AUTHORIZATION_ENDPOINT_DISABLE = 'admin.authorization.endpoint.disable';

/** The audit operation of an operator's change of a partner's webhook endpoint (the partner's own is `webhook.endpoint.update`). */
export const ADMIN_WEBHOOK_ENDPOINT_UPDATE = 'admin.webhook.endpoint.update';

/**
 * The audit (and status-history) operation of an operator's card status change: `admin.` and the
 * partner operation that makes the same change (`admin.card.lock`, `admin.card.restrict.fraud`).
 */
export function adminCardStatusOperation(status: OperatorStatus): string {
  return `admin.${operatorStatusChange(status).audit}`;
}

function validated<T>(validator: () => ValidateFunction, body: unknown): T {
  const validate = validator();
  if (validate(body)) return body as T;
  const invalidParams: InvalidParam[] = (validate.errors ?? []).map((e) => ({
    name:
      e.keyword === 'required'
        ? String(e.params.missingProperty)
        : e.keyword === 'additionalProperties'
          ? String(e.params.additionalProperty)
          : e.instancePath.replace(/^\//, '') || 'body',
    reason:
      e.keyword === 'additionalProperties'
        ? 'is not allowed'
        : e.keyword === 'enum'
          ? `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`
          : e.keyword === 'pattern' && e.instancePath === '/reason'
            ? 'must not be blank'
            : (e.message ?? 'is invalid'),
  }));
  throw new GatewayError('validation_failed', 'The request body is invalid', { invalidParams });
}

function partnerId(raw: string): string {
  if (!isObjectId(raw)) throw new GatewayError('not_found', 'No partner has this id');
  return raw;
}

function webhookEndpointId(raw: string): string {
  if (!/^we_[0-9a-f]{24}$/.test(raw)) throw new GatewayError('not_found', 'The partner has no webhook endpoint with this id');
  return raw;
}

function cardKeyOf(raw: string): string {
  if (!CARD_KEY.test(raw)) throw new GatewayError('not_found', 'No card has this cardKey');
  return raw;
}

/** How long an operator's key is remembered: as long as the issuer remembers its operation id (docs/upstreams.md). */
export const ADMIN_KEY_TTL_HOURS = 24;

/** Thrown in a change's transaction whose idempotency key is no longer this request's: the change rolls back. */
class ClaimLost extends Error {}

/** What the admin API's card routes need: the database, the upstream clients and the lease of an idempotency key. */
/** With `cardState` and `deliver`, an operator's status change takes the card's network tokens along (docs/tokens.md "The cascade"). */
export interface AdminCardServices extends CardStateFollowers {
  db: Database;
  clients: UpstreamClients;
  /**
   * Seconds after which a claimed idempotency key whose request never ended (its process died) may
   * be taken over by a retry: longer than the request can run (two issuer calls and the database).
   */
  keyLeaseSeconds: number;
}

function translate(err: unknown): unknown {
  if (err instanceof PublicKeyError) {
    return new GatewayError('validation_failed', err.message, { invalidParams: [{ name: 'publicKey', reason: err.message }] });
  }
  if (err instanceof PartnerStoreError) return new GatewayError(err.reason === 'not_found' ? 'not_found' : 'conflict', err.message);
  return err;
}

/** An admin route's handler: returns its answer (gateway/http/answer.ts); `res` for its `locals` only. */
type AsyncHandler = (req: express.Request, res: Pick<express.Response, 'locals'>) => Promise<HandlerAnswer>;
/** The route's request handler: writes the answer its handler returns; a throw or rejection goes to the problem writer. */
const route = (handler: AsyncHandler): RequestHandler => (req, res, next) => {
  handler(req, res).then(
    (answer) => {
      try {
        writeAnswer(res, answer);
      } catch (err) {
        next(err);
      }
    },
    (err: unknown) => next(translate(err))
  );
};

/**
 * The Partner Gateway admin API (not express-gateway's): partner registration, key rotation and
 * revocation, status, B2B tenants. Every call needs `Authorization: Bearer <ADMIN_TOKEN>`.
 * Listens on ADMIN_HOST:ADMIN_PORT, loopback by default.
 *
 * `extraRoutes` mounts more routes behind the same token, JSON body, `no-store` and problem
 * handler (e.g. `configAdminRoutes` of gateway/runtime), so that a feature adds its admin routes
 * without editing this file.
 */
export function createAdminApi(options: {
  partners: PartnerStore;
  adminToken: string;
  log: Logger;
  webhookEndpoints?: WebhookEndpointStore;
  /** The partners' decision endpoints and this process's health of their calls (docs/authorization-endpoint.md). */
  authorizationEndpoints?: Pick<AuthorizationEndpointServices, 'endpoints' | 'calls'>;
  cards?: AdminCardServices;
  extraRoutes?: (app: Application) => void;
}): Application {
  const { partners, adminToken, log, webhookEndpoints, authorizationEndpoints, cards } = options;
  const app = express();
  app.disable('x-powered-by');
  app.use(requestContext(log, 'admin'));
  app.use(function adminAuth(req, _res, next) {
    const match = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '');
    if (!match || !tokenMatches(match[1], adminToken)) {
      next(new GatewayError('admin_unauthorized', 'Send Authorization: Bearer <ADMIN_TOKEN>', { headers: { 'WWW-Authenticate': 'Bearer realm="admin"' } }));
      return;
    }
    next();
  });
  app.use(jsonBody());
  app.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });

  app.post('/admin/partners', route(async (req) => {
    const body = validated<{ name: string; issuer: string; publicKey: string; kid?: string }>(validators.createPartner, req.body);
    const partner = await partners.create(body);
    log.info({ requestId: req.requestId, partnerId: partner._id, operation: 'partner.create' }, 'admin change');
    return { status: 201, body: partner };
  }));
  app.get('/admin/partners', route(async () => {
    return { status: 200, body: { data: await partners.list() } };
  }));
  app.get('/admin/partners/:id', route(async (req) => {
    const partner = await partners.get(partnerId(req.params.id));
    if (!partner) throw new GatewayError('not_found', 'No partner has this id');
    return { status: 200, body: { ...partner, tokenizeBeforeActivation: await partners.tokenizeBeforeActivation(partner._id), b2bAccounts: await partners.tenants(partner._id) } };
  }));
  app.patch('/admin/partners/:id', route(async (req) => {
    const change = validated<{ status?: 'active' | 'disabled'; processingEnabled?: boolean; tokenizeBeforeActivation?: boolean }>(validators.updatePartner, req.body);
    const partner = await partners.update(partnerId(req.params.id), change, req.requestId);
    log.info({ requestId: req.requestId, partnerId: partner._id, operation: 'partner.update', ...change }, 'admin change');
    // Only the admin API shows the setting (a partner's own views are unchanged).
    return { status: 200, body: { ...partner, tokenizeBeforeActivation: await partners.tokenizeBeforeActivation(partner._id) } };
  }));
  app.post('/admin/partners/:id/keys', route(async (req) => {
    const body = validated<{ publicKey: string; kid?: string }>(validators.addKey, req.body);
    const id = partnerId(req.params.id);
    const key = await partners.addKey(id, body);
    log.info({ requestId: req.requestId, partnerId: id, kid: key.kid, operation: 'partner.key.add' }, 'admin change');
    return { status: 201, body: key };
  }));
  app.delete('/admin/partners/:id/keys/:kid', route(async (req) => {
    const id = partnerId(req.params.id);
    const key = await partners.revokeKey(id, req.params.kid);
    log.info({ requestId: req.requestId, partnerId: id, kid: key.kid, operation: 'partner.key.revoke' }, 'admin change');
    return { status: 200, body: key };
  }));
  app.post('/admin/partners/:id/tenants', route(async (req) => {
    const { name } = validated<{ name: string }>(validators.addTenant, req.body);
    const id = partnerId(req.params.id);
    const tenant = await partners.addTenant(id, name);
    log.info({ requestId: req.requestId, partnerId: id, tenantId: tenant._id, operation: 'partner.tenant.add' }, 'admin change');
    return { status: 201, body: tenant };
  }));
  if (webhookEndpoints) {
    const knownPartner = async (raw: string): Promise<string> => {
      const id = partnerId(raw);
      if (!(await partners.get(id))) throw new GatewayError('not_found', 'No partner has this id');
      return id;
    };
    app.get('/admin/partners/:id/webhook-endpoints', route(async (req) => {
      return { status: 200, body: { data: await webhookEndpoints.health(await knownPartner(req.params.id)) } };
    }));
    app.patch('/admin/partners/:id/webhook-endpoints/:endpointId', route(async (req) => {
      const { status } = validated<{ status: 'enabled' | 'disabled' }>(validators.updateWebhookEndpoint, req.body);
      const id = await knownPartner(req.params.id);
      const endpointId = webhookEndpointId(req.params.endpointId);
      const changed = await webhookEndpoints.update(id, endpointId, { status }, (tx) =>
        recordAudit(tx, { partnerId: id, operation: ADMIN_WEBHOOK_ENDPOINT_UPDATE, targetType: 'webhook-endpoint', targetId: endpointId, requestId: req.requestId, outcome: 'success', details: { status } })
      );
      if (!changed) throw new GatewayError('not_found', 'The partner has no webhook endpoint with this id');
      log.info({ requestId: req.requestId, partnerId: id, endpointId, operation: 'webhook.endpoint.update', status }, 'admin change');
      const health = (await webhookEndpoints.health(id)).find((endpoint) => endpoint.id === endpointId);
      return { status: 200, body: health ?? changed };
    }));
  }
  if (authorizationEndpoints) {
    const { endpoints, calls } = authorizationEndpoints;
    const knownPartner = async (raw: string): Promise<string> => {
      const id = partnerId(raw);
      if (!(await partners.get(id))) throw new GatewayError('not_found', 'No partner has this id');
      return id;
    };
    /** The endpoint (never its secret), who disabled it, and this process's health of its calls. */
    const view = async (id: string) => {
      const endpoint = await endpoints.adminView(id);
      if (!endpoint) throw new GatewayError('not_found', 'The partner has no authorization endpoint');
      return { ...endpoint, health: calls.health(id) ?? null };
    };
    app.get('/admin/partners/:id/authorization-endpoint', route(async (req) => {
      return { status: 200, body: await view(await knownPartner(req.params.id)) };
    }));
    app.post('/admin/partners/:id/authorization-endpoint/disable', route(async (req) => {
      validated<Record<string, never>>(validators.empty, req.body ?? {});
      const id = await knownPartner(req.params.id);
      const changed = await endpoints.update(id, { status: 'disabled' }, 'operator', (tx, endpointId) =>
        recordAudit(tx, { partnerId: id, operation: ADMIN_AUTHORIZATION_ENDPOINT_DISABLE, targetType: 'authorization-endpoint', targetId: endpointId, requestId: req.requestId, outcome: 'success', details: { status: 'disabled' } })
      );
      if (!changed) throw new GatewayError('not_found', 'The partner has no authorization endpoint');
      log.info({ requestId: req.requestId, partnerId: id, endpointId: changed.id, operation: ADMIN_AUTHORIZATION_ENDPOINT_DISABLE }, 'admin change');
      return { status: 200, body: await view(id) };
    }));
  }
  if (cards) {
    const { db, clients, keyLeaseSeconds, cardState, deliver } = cards;
    // Operators' keys: the partners' key-claim store, over the operators' own table.
    const keys = new KeyClaimStore(db, OPERATOR_KEYS);
    const terms = { leaseSeconds: keyLeaseSeconds, ttlHours: ADMIN_KEY_TTL_HOURS };
    /**
     * An operator changes a card's status (docs/admin-api.md, "Card status"): the partner's status
     * change (`applyStatusChange`) with the operator as its actor. The body is checked first (400,
     * nothing changes), then the Idempotency-Key is claimed (its operation id is the issuer's
     * Idempotency-Key on every retry), then the card is read (404) and the transition checked (409).
     */
    app.post('/admin/cards/:cardKey/status', route(async (req, res) => {
      const cardKey = cardKeyOf(req.params.cardKey);
      const { status, reason } = validated<{ status: OperatorStatus; reason: string }>(validators.cardStatus, req.body);
      if (containsCardNumber(reason)) {
        throw new GatewayError('validation_failed', 'The request body is invalid', { invalidParams: [{ name: 'reason', reason: 'must not hold a card number' }] });
      }
      const key = idempotencyKeyOf(req.headers);
      // The route names the card; no separate path parameters are hashed (the hash of keys stored
      // before the stores were one).
      const routeName = `POST /admin/cards/${cardKey}/status`;
      const keyRequest = key === undefined ? undefined : { key, route: routeName, requestHash: requestHash(routeName, undefined, { status, reason }) };
      let claim: KeyClaim | undefined;
      if (keyRequest !== undefined) {
        const claimed = await keys.claim(keyRequest, terms);
        switch (claimed.outcome) {
          case 'mismatch':
            throw new GatewayError('idempotency_key_reused', 'This Idempotency-Key was used with a different request');
          case 'in_progress':
            throw new GatewayError('idempotency_in_progress', 'A request with this Idempotency-Key is still running; retry shortly', { headers: { 'Retry-After': '1' } });
          case 'replay':
            return replayedAnswer(claimed.response);
          case 'claimed':
            claim = claimed.claim;
            req.upstreamOperation = { id: claim.operationId, resumed: claim.resumed };
        }
      }
      const change = operatorStatusChange(status).statusChange;
      const operation = adminCardStatusOperation(status);
      let result: CardStatusResult;
      // The lease is renewed while the change runs (a quarter of it at a time), so only a dead
      // holder's key is taken over, never a slow one's.
      const keep = claim ? keys.keep(claim, Math.max(1000, (keyLeaseSeconds * 1000) / 4), (renewError: unknown) => log.warn({ err: renewError, requestId: req.requestId }, 'admin idempotency key lease not renewed')) : async () => undefined;
      try {
        result = await applyStatusChange({ db, clients, log, cardState, deliver }, {
          cardKey,
          change,
          issuerBody: { reason },
          operationId: upstreamOperationId(req),
          resumed: req.upstreamOperation?.resumed,
          actor: { source: 'operator', operation, requestId: req.requestId, eventNamesRequest: false, auditDetails: { source: 'operator' } },
          ctx: { requestId: req.requestId, timing: res.locals },
          inTransaction: async (tx, answer) => {
            if (claim && !(await keys.complete(claim, jsonAnswer(200, answer), tx))) throw new ClaimLost();
          },
        });
      } catch (err) {
        await keep();
        if (err instanceof ClaimLost && keyRequest !== undefined) {
          // A retry took the key over (this request outlived its lease) and may have completed it.
          // The issuer may have applied this call, whose local change just rolled back: the card
          // reconciler brings the row to the issuer's state, as after a timeout.
          await markIssuerCheckDue(db, cardKey, { source: 'operator', target: change.to }).catch((markError: unknown) =>
            log.warn({ err: markError, requestId: req.requestId, cardKey }, 'card not marked for an issuer check')
          );
          const stored = await keys.completedAnswer(keyRequest);
          if (stored) {
            return replayedAnswer(stored);
          }
          throw new GatewayError('idempotency_in_progress', 'A request with this Idempotency-Key is still running; retry shortly', { headers: { 'Retry-After': '1' } });
        }
        if (claim) {
          await keys.release(claim).catch((releaseError: unknown) => log.warn({ err: releaseError, requestId: req.requestId }, 'admin idempotency key not released; a retry waits for its lease'));
        }
        throw err;
      }
      await keep();
      log.info({ requestId: req.requestId, cardKey, operation, status: result.status, statusCode: result.statusCode }, 'admin change');
      return { status: 200, body: result };
    }));
  }
  options.extraRoutes?.(app);

  app.use(notFound());
  app.use(problemHandler(log));
  return app;
}
