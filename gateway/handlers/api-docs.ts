import type { RequestHandler } from 'express';
import { GatewayError } from '../errors';

/** `GET /openapi.json` (no auth): the OpenAPI 3.1 document. Placeholder until implemented. */
export function openApiDocument(): RequestHandler {
  return (_req, _res, next) => next(new GatewayError('route_not_found', 'not implemented yet'));
}

/** `GET /docs` (no auth): the rendered API reference. Placeholder until implemented. */
export function apiDocsPage(): RequestHandler {
  return (_req, _res, next) => next(new GatewayError('route_not_found', 'not implemented yet'));
}
