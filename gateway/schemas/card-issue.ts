import type { FromSchema } from 'json-schema-to-ts';
import { CURRENCY, EMBOSS_NAME, EXP_DATE, type JsonSchema } from './common';

/** Card-issue request body (virtual and physical), spec 2.7. */
export const cardIssue = {
  $id: 'https://partner-gateway.dev/schemas/card-issue.json',
  type: 'object',
  additionalProperties: false,
  required: ['expDate', 'clientCode', 'currency', 'productCode'],
  properties: {
    expDate: { ...EXP_DATE, 'x-exp-date-not-past': true },
    clientCode: { type: 'string', minLength: 1, maxLength: 64, description: "The individual's clientID" },
    currency: CURRENCY,
    productCode: { type: 'string', minLength: 1, maxLength: 64 },
    embossedName: EMBOSS_NAME,
    shippingAddressId: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const satisfies JsonSchema;

/** The validated card-issue body. */
export type CardIssueBody = FromSchema<typeof cardIssue>;
