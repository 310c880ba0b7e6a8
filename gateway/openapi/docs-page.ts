import crypto from 'node:crypto';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { PARTNER_BASE_PATH as PARTNER_BASE } from '../catalog';

/** The one asset the docs page loads besides the document: Redoc's standalone bundle. */
export const REDOC_ASSET = 'redoc.standalone.js';
/** The installed Redoc version (`v=` in the bundle's URL, so that an upgrade is never served from a stale cache). */
export const REDOC_VERSION = (require('redoc/package.json') as { version: string }).version;
/** Where the page loads it from: the page's own route with `?asset=` (one public route, no CDN). */
export const REDOC_ASSET_URL = `${PARTNER_BASE}/docs?asset=${REDOC_ASSET}&v=${REDOC_VERSION}`;
/** Where the page loads the OpenAPI document from. */
export const OPENAPI_URL = `${PARTNER_BASE}/openapi.json`;

/**
 * Content-Security-Policy of the page: everything from this origin only. Redoc needs inline
 * styles (styled-components injects `<style>` elements) and runs its search index in a web
 * worker made from a `blob:` URL; nothing else is allowed: no inline script, no other origin,
 * no framing, no form posts.
 */
export const DOCS_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The HTML of the docs page: a `<redoc>` element and the bundle, no inline script. */
export function docsPageHtml(): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Partner Card-Management API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="${OPENAPI_URL}" required-props-first="true" expand-responses="200,201" path-in-middle-panel="true"></redoc>
<script src="${REDOC_ASSET_URL.replace(/&/g, '&amp;')}"></script>
</body>
</html>
`;
}

/** A static body ready to serve: raw, gzipped, and its strong ETag. */
export interface StaticBody {
  raw: Buffer;
  gzip: Buffer;
  etag: string;
}

/** Prepares a body once (at start): gzip and ETag computed here, not per request. */
export function staticBody(raw: Buffer): StaticBody {
  return { raw, gzip: zlib.gzipSync(raw), etag: `"${crypto.createHash('sha256').update(raw).digest('base64url').slice(0, 32)}"` };
}

/**
 * The one thing Redoc 2 would load from another origin: Redocly's logo in the menu footer
 * (`<img src>`, unconditional, hidden by Redoc when it fails to load). The CSP would block it and
 * log a violation on every visit; the bundle we serve points it at an empty `data:` image instead,
 * which fails at once, so Redoc hides it without any request.
 */
export const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

/** Redoc's standalone bundle from node_modules (redoc 2), read and prepared once. */
export function redocBundle(): StaticBody {
  const source = fs.readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  return staticBody(Buffer.from(source.split(REDOC_CDN_LOGO).join('data:,')));
}
