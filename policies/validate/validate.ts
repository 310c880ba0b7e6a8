import type { RequestHandler } from 'express';
import { GatewayError } from '../../gateway/errors';
import { carriesBody } from '../../gateway/http/body';
import { SCHEMAS } from '../../gateway/schemas';
import { assertValid, bodyAjv, queryAjv, validatorOnFirstUse } from '../../gateway/validation/ajv';
import type { ValidateParams } from './schema';

// C0 controls but tab, line feed and carriage return, and DEL: never meaningful in this API, and
// PostgreSQL cannot store U+0000 in text at all.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const unfit = (text: string) => CONTROL.test(text) || UNPAIRED_SURROGATE.test(text);

/**
 * The dotted path of the first string holding a control character or an unpaired surrogate (not
 * well-formed Unicode: it cannot be stored or forwarded faithfully), or undefined.
 */
export function controlCharacterAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return unfit(value) ? path || 'value' : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = controlCharacterAt(value[i], path ? `${path}.${i}` : String(i));
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const name = path ? `${path}.${key}` : key;
      if (unfit(key)) return name;
      const found = controlCharacterAt(item, name);
      if (found) return found;
    }
  }
  return undefined;
}

function refuseControlCharacters(value: unknown, where: 'body' | 'query' | 'path'): void {
  const name = controlCharacterAt(value);
  if (name) {
    throw new GatewayError('validation_failed', `The request ${where} is invalid`, {
      invalidParams: [{ name, reason: 'must not contain control characters or unpaired surrogates' }],
    });
  }
}

/**
 * The validate policy: compiles its schemas once (at the first request that needs them: see
 * `validatorOnFirstUse`), and on each request replaces `req.body` / `req.query` with the validated
 * values (defaults applied, query types coerced); the validated body and query are also the VALIDATED_BODY and
 * VALIDATED_QUERY facts. A failure is a 400 `validation_failed` listing every invalid field, and nothing after
 * the policy runs. With a `body` schema, a request without a body (none, zero bytes or only
 * whitespace, as the partner app's body parser recorded it) is 400 `body_required`, a body that is
 * not JSON 415 `unsupported_media_type`, both before the schema is applied.
 */
export function validate(params: ValidateParams): RequestHandler {
  const body = params.body ? validatorOnFirstUse(bodyAjv, SCHEMAS[params.body]) : undefined;
  const query = params.query ? validatorOnFirstUse(queryAjv, SCHEMAS[params.query]) : undefined;
  const path = params.params ? validatorOnFirstUse(queryAjv, SCHEMAS[params.params]) : undefined;
  return function validateRequest(req, _res, next) {
    try {
      if (path) {
        refuseControlCharacters(req.params, 'path');
        assertValid(path(), { ...req.params }, 'path');
      }
      if (body) {
        // An operation that takes a body never reads a missing one as `{}` (body-parser's answer for
        // both): a client, proxy or retry that drops the body must not replace what the body would
        // set with nothing (spend controls with none). Nothing after this step runs.
        if (!carriesBody(req)) {
          throw new GatewayError('body_required', 'This operation takes a JSON body and the request had none (no bytes, or only whitespace)');
        }
        if (!req.is(['application/json', 'application/*+json'])) {
          throw new GatewayError('unsupported_media_type', 'Send the body as application/json');
        }
        refuseControlCharacters(req.body, 'body');
        // A copy: defaults are applied to what the handler sees, not to the parsed original. The
        // VALIDATED_BODY fact (gateway/http/request-facts.ts): the handler's `body`.
        req.body = req.validatedBody = assertValid(body(), structuredClone(req.body), 'body');
      }
      if (query) {
        refuseControlCharacters(req.query, 'query');
        // The VALIDATED_QUERY fact (gateway/http/request-facts.ts): the handler's `query`.
        const validated = assertValid<Record<string, unknown>>(query(), { ...req.query }, 'query');
        Object.defineProperty(req, 'query', { value: validated, writable: true, configurable: true, enumerable: true });
        req.validatedQuery = validated;
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}
