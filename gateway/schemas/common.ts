import { EXP_DATE_PATTERN } from '../validation/keywords';

/** A JSON Schema as our validators take it. */
export type JsonSchema = Record<string, unknown> & { $id: string };

/** ISO 3166-1 alpha-2 country code. */
export const COUNTRY = { type: 'string', minLength: 2, maxLength: 2, 'x-country': true } as const;
/** A real calendar date, yyyy-mm-dd. */
export const DATE = { type: 'string', format: 'date' } as const;
/** Card expiry MM/YYYY (month 01..12). */
export const EXP_DATE = { type: 'string', pattern: EXP_DATE_PATTERN, description: 'MM/YYYY' } as const;
/** Three upper-case letters (ISO 4217 style). */
export const CURRENCY = { type: 'string', pattern: '^[A-Z]{3}$', description: 'three upper-case letters' } as const;
/**
 * Emboss name: 1 to 26 characters, no spaces (the issuer refuses them): letters A–Z (either case),
 * digits, and the separators . ' - / used between name parts (e.g. JOHN.DOE, O'NEIL).
 */
export const EMBOSS_NAME = { type: 'string', pattern: "^[A-Za-z0-9.'/-]{1,26}$", description: "1-26 of A-Z a-z 0-9 . ' - /, no spaces" } as const;
