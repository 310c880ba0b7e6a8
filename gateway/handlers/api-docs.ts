import type { Request } from 'express';
import type { AnswerHeaders, HandlerAnswer } from '../http/answer';
import type { OperationHandler } from './context';
import { GatewayError } from '../errors';
import { buildOpenApiDocument } from '../openapi/document';
import type { HandlerBuild, HandlerServices } from './services';
import { DOCS_PAGE_CSP, docsPageHtml, REDOC_ASSET, redocBundle, staticBody, type StaticBody } from '../openapi/docs-page';

/**
 * The public documentation may be cached (it is the same for everyone and changes only with a
 * deployment), unlike every other answer of the partner API (`no-store`, set by the partner app
 * and overridden here).
 */
const DOCUMENT_CACHE_CONTROL = 'public, max-age=300';
const BUNDLE_CACHE_CONTROL = 'public, max-age=86400';

let redoc: StaticBody | undefined;

/**
 * Redoc's bundle, read and gzipped at its first request, then kept for the life of the process (it
 * is the same for every configuration). Preparing it at every start cost about 0.1 s of CPU, for
 * an asset few starts ever serve.
 */
function redocOnce(): StaticBody {
  redoc ??= redocBundle();
  return redoc;
}

/**
 * The answer of a prepared body: 304 on a matching `If-None-Match`, gzip when the client takes it.
 * The writer answers 304 too where `If-None-Match` names the ETag among others (`req.fresh`).
 * `extra`: headers the answer carries before the caching ones (the page's security headers).
 */
function staticAnswer(req: Request, body: StaticBody, contentType: string, cacheControl: string, extra?: AnswerHeaders): HandlerAnswer {
  const headers = { ...extra, 'Cache-Control': cacheControl, ETag: body.etag, Vary: 'Accept-Encoding' };
  if (req.headers['if-none-match'] === body.etag) return { status: 304, headers };
  // Content-Type among the headers: before Content-Encoding, as the page has always had them.
  if (req.acceptsEncodings('gzip', 'identity') === 'gzip') return { status: 200, headers: { ...headers, 'Content-Type': contentType, 'Content-Encoding': 'gzip' }, bytes: body.gzip };
  return { status: 200, headers: { ...headers, 'Content-Type': contentType }, bytes: body.raw };
}

/** The page's own headers: its Content-Security-Policy and no framing or referrer. */
const PAGE_HEADERS: AnswerHeaders = { 'Content-Security-Policy': DOCS_PAGE_CSP, 'Referrer-Policy': 'no-referrer', 'X-Frame-Options': 'DENY' };

/**
 * `GET /openapi.json` (no auth): the OpenAPI 3.1 document, generated once when the pipeline is
 * built, from the route table of the configuration being built and the JSON Schemas of
 * `gateway/schemas` (docs/openapi.md). Cacheable for 5 minutes, with an ETag.
 *
 * @param gatewayConfig the configuration whose pipelines are being built (the operation policy
 *   passes on its context's).
 */
export function openApiDocument(_services: HandlerServices, { gatewayConfig }: HandlerBuild): OperationHandler<unknown> {
  const document = staticBody(Buffer.from(JSON.stringify(buildOpenApiDocument(gatewayConfig))));
  return async function serveOpenApiDocument(_facts, req) {
    return staticAnswer(req, document, 'application/json; charset=utf-8', DOCUMENT_CACHE_CONTROL);
  };
}

/**
 * `GET /docs` (no auth): the API reference rendered by Redoc from `/openapi.json`, and
 * `GET /docs?asset=redoc.standalone.js`: Redoc's bundle, served from node_modules (no CDN). The page
 * runs under a strict Content-Security-Policy (only this origin; see `DOCS_PAGE_CSP`).
 */
export function apiDocsPage(): OperationHandler<unknown> {
  const page = staticBody(Buffer.from(docsPageHtml()));
  return async function serveApiDocs(_facts, req) {
    const asset = req.query.asset;
    if (asset === undefined) return staticAnswer(req, page, 'text/html; charset=utf-8', DOCUMENT_CACHE_CONTROL, PAGE_HEADERS);
    if (asset === REDOC_ASSET) return staticAnswer(req, redocOnce(), 'application/javascript; charset=utf-8', BUNDLE_CACHE_CONTROL);
    throw new GatewayError('not_found', 'No such documentation asset');
  };
}
