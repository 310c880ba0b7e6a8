import { decodeCursor } from '../db/cursor';
import { GatewayError } from '../errors';
import { fanOut } from '../outbox/partner-events';
import { recordAudit } from '../audit/audit-log';
import type { Queryable } from '../db/database';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { BodyFacts, OperationHandler, OwnerFacts, PartnerFacts, QueryFacts } from './context';
import type { RequestBodies } from './request-bodies';
import type { Partner } from '../partners/partner-store';
import type { WebhookDeliveriesQuery } from '../schemas';

/**
 * The audit entry of a change of one of the partner's webhook endpoints, written in the change's
 * transaction. `details` never holds a secret: the URL and event types of a change, nothing for a
 * rotation.
 */
function auditEndpoint(partner: Partner, requestId: string, operation: string, details?: Record<string, string | null>) {
  return async (tx: Queryable, endpointId: string): Promise<void> =>
    recordAudit(tx, { partnerId: partner._id, operation, targetType: 'webhook-endpoint', targetId: endpointId, requestId, outcome: 'success', ...(details ? { details } : {}) });
}

/** The URL and event types a request sets, as an audit entry's details. */
function endpointDetails(body: { url?: string; events?: string[]; status?: string }): Record<string, string | null> {
  return { url: body.url ?? null, events: body.events ? body.events.join(',') : null, status: body.status ?? null };
}

/** Answers 400 on `url` when the guard of partner URLs refuses it (registration and change; delivery checks again). */
async function checkedUrl(services: HandlerServices, url: string | undefined): Promise<void> {
  if (url === undefined) return;
  const check = await services.outbound.check(url);
  if (!check.ok) throw new GatewayError('validation_failed', 'The webhook URL is not allowed', { invalidParams: [{ name: 'url', reason: check.reason }] });
}

const gone = () => new GatewayError('not_found', 'No webhook endpoint has this id');

/** `GET /webhooks/endpoints`. */
export function listWebhookEndpoints(services: HandlerServices): OperationHandler<PartnerFacts> {
  return async function listWebhookEndpointsHandler({ partner }, _req, res) {
    return { status: 200, body: { data: await services.webhooks.endpoints.list(partner._id) } };
  };
}

/** `POST /webhooks/endpoints`: 201 with the secret, the only answer that carries it. */
export function createWebhookEndpoint(services: HandlerServices, build: HandlerBuild): OperationHandler<PartnerFacts & BodyFacts<RequestBodies['webhook-endpoint-create']>> {
  const operation = auditActionOf(build);
  return async function createWebhookEndpointHandler({ partner, body }, req, res) {
    await checkedUrl(services, body.url);
    const endpoint = await services.webhooks.endpoints.create(partner._id, body, auditEndpoint(partner, req.requestId, operation, endpointDetails(body)));
    if (!endpoint) throw new GatewayError('conflict', 'You have the maximum number of webhook endpoints: delete one first');
    return { status: 201, body: endpoint };
  };
}

/** `GET /webhooks/endpoints/{id}`. */
export function getWebhookEndpoint(services: HandlerServices): OperationHandler<OwnerFacts<'webhook-endpoint'>> {
  return async function getWebhookEndpointHandler({ ownership: endpointOwned }, _req, res) {
    const endpoint = await services.webhooks.endpoints.get(endpointOwned.partnerId, endpointOwned.id);
    if (!endpoint) throw gone();
    return { status: 200, body: endpoint };
  };
}

/** `PATCH /webhooks/endpoints/{id}`. */
export function updateWebhookEndpoint(services: HandlerServices, build: HandlerBuild): OperationHandler<PartnerFacts & OwnerFacts<'webhook-endpoint'> & BodyFacts<RequestBodies['webhook-endpoint-update']>> {
  const operation = auditActionOf(build);
  return async function updateWebhookEndpointHandler({ partner, ownership: endpointOwned, body: change }, req, res) {
    await checkedUrl(services, change.url);
    const endpoint = await services.webhooks.endpoints.update(endpointOwned.partnerId, endpointOwned.id, change, auditEndpoint(partner, req.requestId, operation, endpointDetails(change)));
    if (!endpoint) throw gone();
    return { status: 200, body: endpoint };
  };
}

/** `DELETE /webhooks/endpoints/{id}`: 204. */
export function deleteWebhookEndpoint(services: HandlerServices, build: HandlerBuild): OperationHandler<PartnerFacts & OwnerFacts<'webhook-endpoint'>> {
  const operation = auditActionOf(build);
  return async function deleteWebhookEndpointHandler({ partner, ownership: endpointOwned }, req, res) {
    if (!(await services.webhooks.endpoints.delete(endpointOwned.partnerId, endpointOwned.id, auditEndpoint(partner, req.requestId, operation)))) throw gone();
    return { status: 204 };
  };
}

/** `POST /webhooks/endpoints/{id}/rotate-secret`: the new secret, shown only here. */
export function rotateWebhookSecret(services: HandlerServices, build: HandlerBuild): OperationHandler<PartnerFacts & OwnerFacts<'webhook-endpoint'>> {
  const operation = auditActionOf(build);
  return async function rotateWebhookSecretHandler({ partner, ownership: endpointOwned }, req, res) {
    const secret = await services.webhooks.endpoints.rotateSecret(endpointOwned.partnerId, endpointOwned.id, auditEndpoint(partner, req.requestId, operation));
    if (!secret) throw gone();
    return { status: 200, body: { secret } };
  };
}

/** `GET /webhooks/endpoints/{id}/deliveries?after&limit`. */
export function listWebhookDeliveries(services: HandlerServices): OperationHandler<OwnerFacts<'webhook-endpoint'> & QueryFacts<WebhookDeliveriesQuery>> {
  return async function listWebhookDeliveriesHandler({ ownership: endpointOwned, query }) {
    let afterId: string | undefined;
    if (query.after !== undefined) {
      afterId = decodeCursor(query.after);
      if (afterId === undefined) {
        throw new GatewayError('validation_failed', 'The cursor is not one this API gave', { invalidParams: [{ name: 'after', reason: 'must be the nextCursor of a previous page' }] });
      }
    }
    return { status: 200, body: await services.webhooks.endpoints.attempts(endpointOwned.partnerId, endpointOwned.id, { afterId, limit: query.limit }) };
  };
}

/** `POST /events/{id}/resend`: 202, one new delivery per enabled endpoint subscribed to its type. */
export function resendEvent(services: HandlerServices): OperationHandler<OwnerFacts<'event'>> {
  return async function resendEventHandler({ ownership: event }, _req, res) {
    const { partnerId, id } = event;
    const deliveries = await services.db.transaction(async (tx) => {
      const rows = await tx.query<{ seq: string }>('SELECT seq FROM partner_events WHERE id = $1 AND partner_id = $2', [id, partnerId]);
      // Deleted by retention since its owner was cached.
      if (!rows.rowCount) throw new GatewayError('not_found', 'No event has this id');
      return fanOut(tx, rows.rows[0].seq, { resend: true });
    });
    services.webhooks.dispatcher.wake();
    return { status: 202, body: { id, deliveries } };
  };
}
