// The served OpenAPI document as the SDK's types are generated from it: the same function runs in
// the generation script and in the test that compares the committed types with what a gateway
// serves (test/sdk/generated-types.test.ts), so the two always agree on what "the same" means.
'use strict';
const crypto = require('node:crypto');

/**
 * The document without `example` and `examples`: the gateway computes them when it builds the
 * document (expiry dates from today), and types never depend on them. Key order is kept.
 */
function normalizeDocument(document) {
  const strip = (node) => {
    if (Array.isArray(node)) return node.map(strip);
    if (node && typeof node === 'object') {
      const out = {};
      for (const [key, value] of Object.entries(node)) if (key !== 'example' && key !== 'examples') out[key] = strip(value);
      return out;
    }
    return node;
  };
  return strip(document);
}

/** The committed form of a normalized document: two-space JSON and a final newline. */
function documentText(normalized) {
  return `${JSON.stringify(normalized, null, 2)}\n`;
}

/** sha256 (hex) of a text's UTF-8 bytes. */
function textHash(text) {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

/** sha256 (hex) of the committed form. */
function documentHash(normalized) {
  return textHash(documentText(normalized));
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * One row per operation of the document: what the client needs at run time and the types cannot
 * carry (method, path, whether it takes an Idempotency-Key, how its list pages, whether it takes a
 * body: the client then always sends one, `{}` at least, since the gateway refuses a request of
 * such an operation without one).
 */
function operationTable(document) {
  const rows = {};
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const query = params.filter((p) => p.in === 'query').map((p) => p.name);
      const ok = Object.entries(op.responses ?? {}).find(([status]) => /^2/.test(status));
      const okSchema = ok?.[1]?.content?.['application/json']?.schema;
      const okName = typeof okSchema?.$ref === 'string' ? okSchema.$ref.split('/').pop() : undefined;
      const okProperties = okName ? Object.keys(document.components?.schemas?.[okName]?.properties ?? {}) : [];
      let paging;
      if (query.includes('page') && okProperties.includes('pagination')) paging = 'page';
      else if (query.includes('page') && okProperties.includes('count')) paging = 'page-count';
      else if (okProperties.includes('nextCursor') && query.includes('cursor')) paging = 'cursor';
      else if (okProperties.includes('nextCursor') && query.includes('after')) paging = 'after';
      rows[op.operationId] = {
        method: method.toUpperCase(),
        path,
        token: (op.security ?? document.security ?? []).length > 0,
        idempotencyKey: params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'),
        ...(op.requestBody ? { body: true } : {}),
        ...(paging ? { paging } : {}),
        success: ok ? Number(ok[0]) : 200,
        ...(ok && !ok[1]?.content ? { empty: true } : {}),
        ...(ok && ok[1]?.content && !ok[1].content['application/json'] ? { text: true } : {}),
      };
    }
  }
  return rows;
}

module.exports = { normalizeDocument, documentText, documentHash, textHash, operationTable };
