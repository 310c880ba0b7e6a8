import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { GatewayError, type InvalidParam } from '../errors';
import { expDateNotPast, isCountryCode, isRsaSecurityKey, todayUtc } from './keywords';
import { withSharedMetaSchema } from './shared-meta-schema';

/**
 * Our JSON Schema dialect: draft 2020-12 subset as AJV 8 implements it, `ajv-formats` (`date`
 * checks real calendar dates, `email`), and these keywords:
 *
 * - `x-country: true`: an upper-case ISO 3166-1 alpha-2 code from the real list;
 * - `x-not-future: true`: a `date` no later than today (UTC);
 * - `x-exp-date-not-past: true`: an `MM/YYYY` expiry not before the current month;
 * - `x-date-order: [earlier, later]` on an object: the `later` date is not before `earlier`;
 * - `x-rsa-security-key: true`: base64 of an RSA public key (SPKI DER) of at least 2048 bits;
 * - `x-unique-names: true` on an array of objects: no two items share a `name`.
 * - `x-max-decimals: n` on a number: at most `n` digits after the decimal point, as the JSON wrote
 *   it (`19.99` passes `2`; `multipleOf: 0.01` would refuse it, a binary fraction being inexact).
 */
/** Digits after the decimal point of a finite number as JavaScript prints it (its shortest round-trip form: what the JSON wrote). */
export function decimalsOf(value: number): number {
  const match = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (!match) return Infinity;
  return Math.max(0, (match[1]?.length ?? 0) - Number(match[2] ?? 0));
}

function withKeywords(ajv: Ajv): Ajv {
  addFormats(ajv, ['date', 'date-time', 'email']);
  // `keyword: true` on a string checks it with `predicate`.
  const stringCheck = (keyword: string, message: string, predicate: (value: string) => boolean) =>
    ajv.addKeyword({
      keyword,
      type: 'string',
      schemaType: 'boolean',
      error: { message },
      validate: (enabled: boolean, data: string) => !enabled || predicate(data),
    });
  stringCheck('x-country', 'must be an ISO 3166-1 alpha-2 country code', isCountryCode);
  stringCheck('x-not-future', 'must not be in the future', (date) => !/^\d{4}-\d{2}-\d{2}$/.test(date) || date <= todayUtc());
  stringCheck('x-exp-date-not-past', 'must not be in the past', (expDate) => expDateNotPast(expDate));
  stringCheck('x-rsa-security-key', 'must be base64 of an RSA public key (SPKI DER) of at least 2048 bits', isRsaSecurityKey);
  ajv.addKeyword({
    keyword: 'x-unique-names',
    type: 'array',
    schemaType: 'boolean',
    error: { message: 'must not name the same item twice' },
    validate: (enabled: boolean, data: unknown[]) => {
      if (!enabled) return true;
      const names = data.map((item) => (item && typeof item === 'object' ? (item as { name?: unknown }).name : undefined));
      return new Set(names).size === names.length;
    },
  });
  ajv.addKeyword({
    keyword: 'x-max-decimals',
    type: 'number',
    schemaType: 'number',
    error: { message: (cxt) => `must have at most ${String(cxt.schema)} decimals` },
    validate: (decimals: number, data: number) => decimalsOf(data) <= decimals,
  });
  ajv.addKeyword({
    keyword: 'x-date-order',
    type: 'object',
    schemaType: 'array',
    error: { message: (cxt) => `must not be before ${String((cxt.schema as string[])[0])}` },
    validate: function dateOrder(order: string[], data: Record<string, unknown>) {
      const [earlier, later] = order;
      const a = data[earlier];
      const b = data[later];
      if (typeof a !== 'string' || typeof b !== 'string') return true;
      if (b >= a) return true;
      (dateOrder as unknown as { errors: Partial<ErrorObject>[] }).errors = [
        { keyword: 'x-date-order', instancePath: `/${later}`, message: `must not be before ${earlier}`, params: {} },
      ];
      return false;
    },
  });
  return ajv;
}

/** For JSON bodies: no type coercion, defaults applied, every error reported. */
export const bodyAjv = withKeywords(withSharedMetaSchema(new Ajv({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, coerceTypes: false })));

/** For query strings and path parameters (always strings on the wire): types coerced. */
export const queryAjv = withKeywords(withSharedMetaSchema(new Ajv({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, coerceTypes: true })));

function fieldName(error: ErrorObject, prefix: string): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') path.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String(error.params.additionalProperty));
  const name = path.join('.');
  return name || prefix;
}

function reason(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not allowed';
    case 'enum':
      return `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'format':
      return error.params.format === 'date' ? 'must be a real date in yyyy-mm-dd format' : `must be a valid ${String(error.params.format)}`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** The invalid fields of a failed validation, one entry per field and reason, no duplicates. */
export function invalidParamsOf(errors: ErrorObject[] | null | undefined, prefix = 'body'): InvalidParam[] {
  const seen = new Set<string>();
  const out: InvalidParam[] = [];
  for (const error of errors ?? []) {
    // `if`/`anyOf` wrappers repeat what their branches said.
    if (error.keyword === 'if' || error.keyword === 'anyOf') continue;
    const entry = { name: fieldName(error, prefix), reason: reason(error) };
    const key = `${entry.name}\u0000${entry.reason}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(entry);
    }
  }
  return out;
}

/**
 * The validator of `schema` in `ajv`, compiled at its first call rather than when a pipeline is
 * built: a start compiled the schemas of every route (about 0.1 s of CPU), most of which a process
 * may never serve. Ajv keeps a compiled schema under its `$id`, so each compiles once per process
 * whatever the number of routes and reloads using it. A schema Ajv refuses still fails the tests,
 * which compile every one (test/unit/gateway/validation/schemas.test.ts).
 */
export function validatorOnFirstUse(ajv: Ajv, schema: { $id: string }): () => ValidateFunction {
  let validate: ValidateFunction | undefined;
  return () => (validate ??= ajv.getSchema(schema.$id) ?? ajv.compile(schema));
}

/** Validates `data`; throws a 400 `validation_failed` listing every invalid field. */
export function assertValid<T>(validate: ValidateFunction, data: unknown, where: 'body' | 'query' | 'path'): T {
  if (validate(data)) return data as T;
  throw new GatewayError('validation_failed', `The request ${where === 'path' ? 'path' : where} is invalid`, {
    invalidParams: invalidParamsOf(validate.errors, where),
  });
}
