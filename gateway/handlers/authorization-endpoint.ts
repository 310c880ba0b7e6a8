import { recordAudit } from '../audit/audit-log';
import type { AuthorizationEndpointChange } from '../authorizations/endpoint-store';
import type { Queryable } from '../db/database';
import { GatewayError } from '../errors';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { BodyFacts, OperationHandler, PartnerFacts } from './context';
import type { RequestBodies } from './request-bodies';
import type { Partner } from '../partners/partner-store';

/**
 * The partner's decision endpoint (docs/authorization-endpoint.md): one per partner, at
 * `/authorization-endpoint` (no id in the path: every query is the caller's own partner's).
 */

/**
 * The audit entry of a change of the partner's decision endpoint, written in the change's
 * transaction. `details` never holds a secret: the settings a change sets, nothing for a rotation.
 */
function auditEndpoint(partner: Partner, requestId: string, operation: string, details?: Record<string, string | number | null>) {
  return async (tx: Queryable, endpointId: string): Promise<void> =>
    recordAudit(tx, { partnerId: partner._id, operation, targetType: 'authorization-endpoint', targetId: endpointId, requestId, outcome: 'success', ...(details ? { details } : {}) });
}

function endpointDetails(body: AuthorizationEndpointChange): Record<string, string | number | null> {
  return {
    url: body.url ?? null,
    timeoutMs: body.timeoutMs ?? null,
    defaultDecision: body.defaultDecision ?? null,
    status: body.status ?? null,
    // Only when set: the entries of changes that leave them keep their shape.
    ...(body.requestTypes === undefined ? {} : { requestTypes: [...body.requestTypes].join(',') }),
  };
}

/** Answers 400 on `url` when the guard of partner URLs refuses it (registration and change; each call checks again). */
async function checkedUrl(services: HandlerServices, url: string | undefined): Promise<void> {
  if (url === undefined) return;
  const check = await services.outbound.check(url);
  if (!check.ok) throw new GatewayError('validation_failed', 'The authorization endpoint URL is not allowed', { invalidParams: [{ name: 'url', reason: check.reason }] });
}

const none = () => new GatewayError('not_found', 'You have no authorization endpoint');

/** `POST /authorization-endpoint`: 201 with the secret, the only answer but a rotation's that carries it. */
export function createAuthorizationEndpoint(services: HandlerServices, build: HandlerBuild): OperationHandler<PartnerFacts & BodyFacts<RequestBodies['authorization-endpoint-create']>> {
  const operation = auditActionOf(build);
  return async function createAuthorizationEndpointHandler({ partner, body }, req, res) {
    await checkedUrl(services, body.url);
    const created = await services.authorizationEndpoints.endpoints.create(partner._id, body, auditEndpoint(partner, req.requestId, operation, endpointDetails(body)));
    if (!created) throw new GatewayError('authorization_endpoint_exists', 'You have an authorization endpoint already: change it with PATCH /authorization-endpoint, or delete it first');
    return { status: 201, body: created };
  };
}

/** `GET /authorization-endpoint`: never the secret. */
export function getAuthorizationEndpoint(services: HandlerServices): OperationHandler<PartnerFacts> {
  return async function getAuthorizationEndpointHandler({ partner }, _req, res) {
    const endpoint = await services.authorizationEndpoints.endpoints.get(partner._id);
    if (!endpoint) throw none();
    return { status: 200, body: endpoint };
  };
}

/** `PATCH /authorization-endpoint`. */
export function updateAuthorizationEndpoint(services: HandlerServices, build: HandlerBuild): OperationHandler<PartnerFacts & BodyFacts<AuthorizationEndpointChange>> {
  const operation = auditActionOf(build);
  return async function updateAuthorizationEndpointHandler({ partner, body: change }, req, res) {
    await checkedUrl(services, change.url);
    const endpoint = await services.authorizationEndpoints.endpoints.update(partner._id, change, 'partner', auditEndpoint(partner, req.requestId, operation, endpointDetails(change)));
    if (!endpoint) throw none();
    return { status: 200, body: endpoint };
  };
}

/** `DELETE /authorization-endpoint`: 204. */
export function deleteAuthorizationEndpoint(services: HandlerServices, build: HandlerBuild): OperationHandler<PartnerFacts> {
  const operation = auditActionOf(build);
  return async function deleteAuthorizationEndpointHandler({ partner }, req, res) {
    if (!(await services.authorizationEndpoints.endpoints.delete(partner._id, auditEndpoint(partner, req.requestId, operation)))) throw none();
    return { status: 204 };
  };
}

/** `POST /authorization-endpoint/rotate-secret`: the new secret, shown only here; the previous one signs for 24 h more. */
export function rotateAuthorizationEndpointSecret(services: HandlerServices, build: HandlerBuild): OperationHandler<PartnerFacts> {
  const operation = auditActionOf(build);
  return async function rotateAuthorizationEndpointSecretHandler({ partner }, req, res) {
    const secret = await services.authorizationEndpoints.endpoints.rotateSecret(partner._id, auditEndpoint(partner, req.requestId, operation));
    if (!secret) throw none();
    return { status: 200, body: { secret } };
  };
}
