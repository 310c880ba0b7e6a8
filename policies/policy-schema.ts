/** JSON Schema (draft-07 subset) of a policy's action params. */
export interface PolicySchema {
  $id: string;
  type: 'object';
  description: string;
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  [keyword: string]: unknown;
}
