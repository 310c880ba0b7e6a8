import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import { expect } from 'chai';
import { GatewayError } from '../../../../gateway/errors';
import { OPERATIONS } from '../../../../gateway/catalog';
import { apiDocsPage, openApiDocument } from '../../../../gateway/handlers/api-docs';
import { runWithFacts, type OperationHandler } from '../../../../gateway/handlers/context';
import { DOCS_PAGE_CSP } from '../../../../gateway/openapi/docs-page';
import type { GatewayServices } from '../../../../policies';

/** The document handlers read no service. */
const noServices = {} as GatewayServices;

/** Serves one handler (a public operation's: no facts) on a loopback port; errors answer their GatewayError status and code. */
async function serve(handler: OperationHandler<unknown>): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.get('/', runWithFacts(handler, () => ({})));
  const errors: ErrorRequestHandler = (err: GatewayError, _req, res, _next) => {
    res.status(err.status).json({ code: err.code });
  };
  app.use(errors);
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('gateway/handlers/api-docs', function () {
  describe('openApiDocument', function () {
    // The configuration whose pipelines are being built (a hot reload builds a new one).
    const gatewayConfig = {
      apiEndpoints: { me: { paths: '/api/partner/me', methods: 'GET' }, 'openapi-document': { paths: '/api/partner/openapi.json', methods: 'GET' } },
      pipelines: {
        me: { apiEndpoints: ['me'], policies: [{ 'es512-jwt': [] }, { operation: [{ action: { name: 'me' } }] }] },
        'openapi-document': { apiEndpoints: ['openapi-document'], policies: [{ operation: [{ action: { name: 'openapi-document' } }] }] },
      },
    };

    it('serves the document of the configuration it is built for, cacheable, with an ETag and 304', async function () {
      const server = await serve(openApiDocument(noServices, { name: 'openapi-document', operation: OPERATIONS['openapi-document'], gatewayConfig }));
      try {
        const response = await fetch(server.url);
        expect(response.status).to.equal(200);
        expect(response.headers.get('cache-control')).to.equal('public, max-age=300');
        const document = (await response.json()) as { paths: Record<string, unknown> };
        expect(Object.keys(document.paths).sort()).to.deep.equal(['/me', '/openapi.json']);
        const etag = response.headers.get('etag')!;
        const again = await fetch(server.url, { headers: { 'if-none-match': etag } });
        expect(again.status).to.equal(304);
        const stale = await fetch(server.url, { headers: { 'if-none-match': '"something-else"' } });
        expect(stale.status).to.equal(200);
      } finally {
        await server.close();
      }
    });

    it('refuses, when built, a configuration it cannot describe (the pipeline does not build)', function () {
      const loose = { apiEndpoints: { x: { paths: '/api/partner/x' } }, pipelines: { x: { apiEndpoints: ['x'], policies: [{ 'es512-jwt': [] }] } } };
      expect(() => openApiDocument(noServices, { name: 'openapi-document', operation: OPERATIONS['openapi-document'], gatewayConfig: loose })).to.throw(/apiEndpoint "x": list its methods/);
    });
  });

  describe('apiDocsPage', function () {
    let server: { url: string; close(): Promise<void> };
    before(async function () {
      server = await serve(apiDocsPage());
    });
    after(async function () {
      await server.close();
    });

    it('serves the page with the CSP, and no script or style from another origin', async function () {
      const response = await fetch(server.url);
      expect(response.headers.get('content-security-policy')).to.equal(DOCS_PAGE_CSP);
      expect(response.headers.get('referrer-policy')).to.equal('no-referrer');
      expect(await response.text()).to.match(/<script src="\/api\/partner\/docs\?asset=redoc\.standalone\.js&amp;v=2\.\d+\.\d+"><\/script>/);
    });

    it('serves the bundle gzipped to a client that takes it', async function () {
      const response = await fetch(`${server.url}?asset=redoc.standalone.js`, { headers: { 'accept-encoding': 'gzip' } });
      expect(response.headers.get('content-encoding')).to.equal('gzip');
      expect(response.headers.get('content-security-policy')).to.equal(null);
      expect(await response.text()).to.include('Redoc');
    });

    const refused = ['redoc.standalone.js.map', '../package.json', ''];
    for (const asset of refused) {
      it(`answers 404 not_found for asset "${asset}"`, async function () {
        const response = await fetch(`${server.url}?asset=${encodeURIComponent(asset)}`);
        expect(response.status).to.equal(404);
        expect(await response.json()).to.deep.equal({ code: 'not_found' });
      });
    }
  });
});
