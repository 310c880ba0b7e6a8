import Ajv, { type AnySchema } from 'ajv';

/** One Ajv per `allErrors` setting, used only to check schemas against the draft-07 meta-schema. */
const metaCheckers = new Map<boolean, Ajv>();

function metaChecker(allErrors: boolean): Ajv {
  let checker = metaCheckers.get(allErrors);
  if (!checker) {
    checker = new Ajv({ allErrors });
    metaCheckers.set(allErrors, checker);
  }
  return checker;
}

/**
 * Makes `ajv` check each schema it compiles against a draft-07 meta-schema compiled once per process,
 * not once per Ajv instance: Ajv compiles its meta-schema at an instance's first compile (about
 * 30 ms of CPU each), and the gateway makes one instance per set of options (request bodies, query
 * strings, the admin API).
 *
 * The check is Ajv's own `validateSchema`, run on a shared instance with the same `allErrors`
 * (formats are never checked against a meta-schema, and the other options do not change its
 * verdict): the same schemas are refused, with the same "schema is invalid: ..." error. A schema
 * naming its own `$schema`, and an instance with `$data` (another meta-schema), keep Ajv's own check.
 *
 * @example const bodyAjv = withSharedMetaSchema(new Ajv({ allErrors: true, strict: true }));
 */
export function withSharedMetaSchema<T extends Ajv>(ajv: T): T {
  if (ajv.opts.$data) return ajv;
  const own = ajv.validateSchema.bind(ajv);
  ajv.validateSchema = (schema: AnySchema, throwOrLogError?: boolean): boolean | Promise<unknown> => {
    if (typeof schema !== 'object' || schema === null || schema.$schema !== undefined) return own(schema, throwOrLogError);
    const checker = metaChecker(ajv.opts.allErrors === true);
    const valid = checker.validateSchema(schema) as boolean;
    ajv.errors = checker.errors;
    if (!valid && throwOrLogError) {
      const message = `schema is invalid: ${ajv.errorsText()}`;
      if (ajv.opts.validateSchema === 'log') ajv.logger.error(message);
      else throw new Error(message);
    }
    return valid;
  };
  return ajv;
}
