import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { upstreamError, type ErrorDetail, type UpstreamErrorCode } from './sandbox-error';

const ajv = new Ajv({ allErrors: true, strict: true });
addFormats(ajv, ['date', 'date-time', 'email']);

function toDetail(error: ErrorObject): ErrorDetail {
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return { path: `${error.instancePath}/${missing}`, message: 'is required' };
  }
  return { path: error.instancePath || '/', message: error.message ?? 'is invalid' };
}

/**
 * Compiles a JSON schema once and returns a checker that either returns the value typed as `T`
 * or throws a 400 `SandboxError` listing every problem in `details`.
 *
 * @param schema - a JSON schema (draft 2019 subset understood by Ajv 8, strict mode)
 * @param errorCode - the `errorCode` of the thrown error; defaults to `VALIDATION_ERROR`
 * @example
 * const checkFault = compileValidator<FaultSpec>(faultSchema);
 * const spec = checkFault(req.body);
 */
export function compileValidator<T>(
  schema: object,
  errorCode: UpstreamErrorCode = 'VALIDATION_ERROR',
): (value: unknown) => T {
  const validate = ajv.compile(schema);
  return function checkAgainstSchema(value: unknown): T {
    if (validate(value)) return value as T;
    const details = (validate.errors ?? []).map(toDetail);
    const first = details[0];
    const message = first ? `Invalid request: ${first.path} ${first.message}` : 'Invalid request';
    throw upstreamError(errorCode, message, details);
  };
}

/** `MM/YYYY` with a month from 01 to 12, as the issuer platform writes expiry dates. */
export const EXP_DATE_PATTERN = '^(0[1-9]|1[0-2])/[0-9]{4}$';
