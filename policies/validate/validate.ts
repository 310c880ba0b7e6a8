import type { RequestHandler } from 'express';
import { GatewayError } from '../../gateway/errors';
import { SCHEMAS } from '../../gateway/schemas';
import { assertValid, bodyAjv, queryAjv } from '../../gateway/validation/ajv';
import type { ValidateParams } from './schema';

/**
 * The validate policy: compiles its schemas once, when the pipeline is built, and on each request
 * replaces `req.body` / `req.query` with the validated values (defaults applied, query types
 * coerced). A failure is a 400 `validation_failed` listing every invalid field, and nothing after
 * the policy runs.
 */
export function validate(params: ValidateParams): RequestHandler {
  const body = params.body ? bodyAjv.getSchema(SCHEMAS[params.body].$id) ?? bodyAjv.compile(SCHEMAS[params.body]) : undefined;
  const query = params.query ? queryAjv.getSchema(SCHEMAS[params.query].$id) ?? queryAjv.compile(SCHEMAS[params.query]) : undefined;
  const path = params.params ? queryAjv.getSchema(SCHEMAS[params.params].$id) ?? queryAjv.compile(SCHEMAS[params.params]) : undefined;
  return function validateRequest(req, _res, next) {
    try {
      if (path) assertValid(path, { ...req.params }, 'path');
      if (body) {
        const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
        if (hasBody && !req.is(['application/json', 'application/*+json'])) {
          throw new GatewayError('unsupported_media_type', 'Send the body as application/json');
        }
        // A copy: defaults are applied to what the handler sees, not to the parsed original.
        req.body = assertValid(body, structuredClone(req.body ?? {}), 'body');
      }
      if (query) {
        const validated = assertValid<Record<string, unknown>>(query, { ...req.query }, 'query');
        Object.defineProperty(req, 'query', { value: validated, writable: true, configurable: true, enumerable: true });
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}
