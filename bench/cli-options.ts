/**
 * A whole-number command-line option of a bench: `undefined` when it is not given (the bench's
 * default applies), otherwise the number; anything else, or less than 1 (less than 0 with `zero`),
 * is an error naming the option.
 */
export function positive(value: string | undefined, what: string, zero = false): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < (zero ? 0 : 1)) throw new Error(`${what} must be a ${zero ? 'non-negative' : 'positive'} integer, not ${value}`);
  return n;
}
