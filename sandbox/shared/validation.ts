import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import addFormats from 'ajv-formats';
import { upstreamError, type ErrorDetail, type UpstreamErrorCode } from './sandbox-error';

let ajv: Ajv | undefined;

function sandboxAjv(): Ajv {
  if (!ajv) {
    ajv = new Ajv({ allErrors: true, strict: true });
    addFormats(ajv, ['date', 'date-time', 'email']);
  }
  return ajv;
}

/** Every validator's compile step, for {@link compileEveryValidator}. */
const compileSteps: (() => ValidateFunction)[] = [];

function toDetail(error: ErrorObject): ErrorDetail {
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return { path: `${error.instancePath}/${missing}`, message: 'is required' };
  }
  return { path: error.instancePath || '/', message: error.message ?? 'is invalid' };
}

/**
 * Compiles a JSON schema once (at the first check) and returns a checker that either returns the
 * value typed as `T` or throws a 400 `SandboxError` listing every problem in `details`.
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
  // Compiled at the first check, not when the module loads: a sandbox started beside a gateway
  // (every test gateway) compiled 17 schemas, about 0.1 s of CPU, mostly for routes it never served.
  // A schema error still fails the tests: compileEveryValidator() compiles them all.
  let validate: ValidateFunction | undefined;
  const compile = () => (validate ??= sandboxAjv().compile(schema));
  compileSteps.push(compile);
  return function checkAgainstSchema(value: unknown): T {
    const check = compile();
    if (check(value)) return value as T;
    const details = (check.errors ?? []).map(toDetail);
    const first = details[0];
    const message = first ? `Invalid request: ${first.path} ${first.message}` : 'Invalid request';
    throw upstreamError(errorCode, message, details);
  };
}

/** A checker of a request body: the value typed `T`, or a thrown 400 `SandboxError`. */
export type Checker<T> = (value: unknown) => T;

/**
 * {@link compileValidator} with the value typed by the schema itself (json-schema-to-ts, as the
 * gateway's request types: docs/decisions.md), for a schema declared `as const`. The routes hand
 * the value to code typed by the upstream contract (contracts/upstreams.ts), so a schema that
 * admits what the contract does not describe does not compile.
 *
 * @example
 * const checkCreateCard = compileSchemaValidator(createCardSchema);
 * const input = checkCreateCard(req.body); // { type: 'virtual' | 'physical'; clientCode: string; … }
 */
export function compileSchemaValidator<const Schema extends JSONSchema & object>(schema: Schema, errorCode?: UpstreamErrorCode): Checker<NoInfer<FromSchema<Schema>>>;
// The implementation is untyped: the value's type is computed at each call, for its own schema.
export function compileSchemaValidator(schema: object, errorCode?: UpstreamErrorCode): Checker<unknown> {
  return compileValidator(schema, errorCode);
}

/**
 * Compiles every validator made so far (they compile at their first check otherwise); throws on the
 * first schema Ajv refuses. Returns how many there are. For the tests: a schema error must not wait
 * for the first request of its route.
 */
export function compileEveryValidator(): number {
  for (const compile of compileSteps) compile();
  return compileSteps.length;
}

/** `MM/YYYY` with a month from 01 to 12, as the issuer platform writes expiry dates. */
export const EXP_DATE_PATTERN = '^(0[1-9]|1[0-2])/[0-9]{4}$';
