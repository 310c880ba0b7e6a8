import type { PolicySchema } from '../policy-schema';

/** The sensitive-data policy takes no params. */
export type SensitiveDataParams = Record<string, never>;

export const schema: PolicySchema = {
  $id: 'https://partner-gateway.dev/schemas/policies/sensitive-data.json',
  type: 'object',
  description:
    'Marks a route as returning card data, a PIN or a 3DS answer: Cache-Control: no-store and Pragma: no-cache on every answer, and the access log records the route pattern instead of the URL. No params: the step is written `- sensitive-data: []`.',
  properties: {},
};
