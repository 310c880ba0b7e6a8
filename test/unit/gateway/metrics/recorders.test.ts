import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express, { type Request } from 'express';
import { GatewayError } from '../../../../gateway/errors';
import { createLogger } from '../../../../gateway/logging/logger';
import { problemHandler, notFound } from '../../../../gateway/http/problem';
import { requestContext } from '../../../../gateway/http/request-context';
import {
  JWT_REFUSAL_CODES,
  recordAuthRefusal,
  recordConfigReload,
  recordUpstreamCall,
  registry,
  routeLabel,
  upstreamErrorKind,
  type UpstreamErrorKind,
} from '../../../../gateway/metrics';
import { countOf, seriesValue } from './helpers';

const silent = createLogger({ level: 'silent' });

/** Serves `app` on a loopback port for the duration of `work`. */
async function withServer(app: express.Application, work: (url: string) => Promise<void>): Promise<void> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await work(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Marks a request as served by a pipeline of this apiEndpoint (as the runtime does when a pipeline runs). */
function servedBy(apiEndpointName: string): express.RequestHandler {
  return (req, _res, next) => {
    req.apiEndpointName = apiEndpointName;
    next();
  };
}

describe('unit: metrics/recorders', function () {
  describe('upstreamErrorKind', function () {
    const table: { description: string; failure?: string; status?: number | null; expected: UpstreamErrorKind | undefined }[] = [
      { description: 'a 200 is a success', status: 200, expected: undefined },
      { description: 'a 204 is a success', status: 204, expected: undefined },
      { description: 'no status and no failure (nothing known) is not an error', status: null, expected: undefined },
      { description: 'a timeout', failure: 'timeout', status: null, expected: 'timeout' },
      { description: 'a broken connection', failure: 'connection', status: null, expected: 'connection' },
      { description: 'an unusable 2xx', failure: 'malformed', status: 200, expected: 'malformed' },
      { description: 'a classified 404', failure: 'status', status: 404, expected: 'status_4xx' },
      { description: 'an unclassified 422 (the proxy settles before mapping)', status: 422, expected: 'status_4xx' },
      { description: 'a classified 503', failure: 'status', status: 503, expected: 'status_5xx' },
      { description: 'an unclassified 500', status: 500, expected: 'status_5xx' },
      { description: 'a redirect (never followed) is another status failure', status: 302, expected: 'status_other' },
      { description: 'a status failure without a status', failure: 'status', expected: 'status_other' },
    ];
    for (const row of table) {
      it(row.description, function () {
        expect(upstreamErrorKind(row.failure, row.status)).to.equal(row.expected);
      });
    }
  });

  describe('routeLabel', function () {
    const table: { description: string; req: Partial<Request>; expected: string }[] = [
      {
        description: 'a pipeline request: the apiEndpoint name',
        req: { method: 'GET', apiEndpointName: 'get-card', route: { path: '/api/partner/cards/:id' } },
        expected: 'get-card',
      },
      { description: 'an Express route: method and pattern', req: { method: 'DELETE', route: { path: '/admin/partners/:id/keys/:kid' } }, expected: 'DELETE /admin/partners/:id/keys/:kid' },
      { description: 'no route: unmatched', req: { method: 'GET', originalUrl: '/api/partner/cards/CK1?securityKey=x' }, expected: 'unmatched' },
      { description: 'a non-string pattern (a RegExp route): unmatched', req: { method: 'GET', route: { path: /x/ } }, expected: 'unmatched' },
    ];
    for (const row of table) {
      it(row.description, function () {
        expect(routeLabel(row.req as Request)).to.equal(row.expected);
      });
    }
  });

  describe('requests (through the request context of a listener)', function () {
    it('counts by route pattern and status, observes the latency, and never labels with the raw URL', async function () {
      const app = express();
      app.use(requestContext(silent, 'gateway'));
      app.get('/api/partner/cards/:id', servedBy('metrics-test-get-card'), (_req, res) => {
        res.json({ ok: true });
      });
      app.get('/admin/things/:id', (_req, res) => {
        res.status(201).json({});
      });
      app.use(notFound());
      app.use(problemHandler(silent));

      const before = {
        ok: await countOf('http_requests_total', { component: 'gateway', route: 'metrics-test-get-card', status: '200' }),
        observed: await countOf('http_request_duration_seconds_count', { component: 'gateway', route: 'metrics-test-get-card' }),
        admin: await countOf('http_requests_total', { component: 'gateway', route: 'GET /admin/things/:id', status: '201' }),
        unmatched: await countOf('http_requests_total', { component: 'gateway', route: 'unmatched', status: '404' }),
      };
      await withServer(app, async (url) => {
        for (const key of ['CK0000SECRET01', 'CK0000SECRET02']) {
          expect((await fetch(`${url}/api/partner/cards/${key}?securityKey=c2VjcmV0`)).status).to.equal(200);
        }
        expect((await fetch(`${url}/admin/things/42`)).status).to.equal(201);
        expect((await fetch(`${url}/nowhere/CK0000SECRET03`)).status).to.equal(404);
      });

      expect(await countOf('http_requests_total', { component: 'gateway', route: 'metrics-test-get-card', status: '200' })).to.equal(before.ok + 2);
      expect(await countOf('http_request_duration_seconds_count', { component: 'gateway', route: 'metrics-test-get-card' })).to.equal(before.observed + 2);
      expect(await countOf('http_requests_total', { component: 'gateway', route: 'GET /admin/things/:id', status: '201' })).to.equal(before.admin + 1);
      expect(await countOf('http_requests_total', { component: 'gateway', route: 'unmatched', status: '404' })).to.equal(before.unmatched + 1);
      const text = await registry.metrics();
      expect(text).to.not.match(/SECRET0|securityKey|c2VjcmV0|\/nowhere/);
    });
  });

  describe('upstream calls', function () {
    it('observes every call and counts failures by upstream and kind', async function () {
      const upstream = 'metrics-test-upstream';
      const before = await countOf('upstream_request_duration_seconds_count', { upstream });
      recordUpstreamCall(upstream, 0.012, undefined, 200);
      recordUpstreamCall(upstream, 5.001, 'timeout', null);
      recordUpstreamCall(upstream, 0.003, undefined, 503);
      recordUpstreamCall(upstream, 0.004, 'status', 503);
      expect(await countOf('upstream_request_duration_seconds_count', { upstream })).to.equal(before + 4);
      expect(await seriesValue('upstream_request_duration_seconds_bucket', { upstream, le: '0.005' })).to.equal(2);
      expect(await seriesValue('upstream_errors_total', { upstream, kind: 'timeout' })).to.equal(1);
      expect(await seriesValue('upstream_errors_total', { upstream, kind: 'status_5xx' })).to.equal(2);
      expect(await seriesValue('upstream_errors_total', { upstream, kind: 'connection' })).to.equal(undefined);
    });
  });

  describe('JWT refusals', function () {
    it('lists every 401 code of the catalog but the admin API\'s, each exposed from the start', async function () {
      expect(JWT_REFUSAL_CODES).to.include.members(['token_missing', 'token_expired', 'signature_invalid', 'key_revoked', 'unknown_partner']);
      expect(JWT_REFUSAL_CODES).to.not.include('admin_unauthorized');
      for (const code of JWT_REFUSAL_CODES) expect(await seriesValue('jwt_refusals_total', { code }), code).to.be.a('number');
    });

    it('counts the 401 problems the problem writer sends, by code, and nothing else', async function () {
      const app = express();
      app.use(requestContext(silent, 'gateway'));
      app.get('/expired', (_req, _res, next) => next(new GatewayError('token_expired')));
      app.get('/forbidden', (_req, _res, next) => next(new GatewayError('forbidden')));
      app.get('/admin', (_req, _res, next) => next(new GatewayError('admin_unauthorized')));
      app.use(problemHandler(silent));
      const before = await countOf('jwt_refusals_total', { code: 'token_expired' });
      await withServer(app, async (url) => {
        expect((await fetch(`${url}/expired`)).status).to.equal(401);
        expect((await fetch(`${url}/forbidden`)).status).to.equal(403);
        expect((await fetch(`${url}/admin`)).status).to.equal(401);
      });
      expect(await countOf('jwt_refusals_total', { code: 'token_expired' })).to.equal(before + 1);
      expect(await seriesValue('jwt_refusals_total', { code: 'forbidden' })).to.equal(undefined);
      expect(await seriesValue('jwt_refusals_total', { code: 'admin_unauthorized' })).to.equal(undefined);
    });

    it('ignores codes it does not know', async function () {
      recordAuthRefusal('not_a_code');
      expect(await seriesValue('jwt_refusals_total', { code: 'not_a_code' })).to.equal(undefined);
    });
  });

  describe('config reloads', function () {
    it('exposes applied and rejected from the start and counts each reload', async function () {
      const applied = await seriesValue('config_reloads_total', { outcome: 'applied' });
      const rejected = await seriesValue('config_reloads_total', { outcome: 'rejected' });
      expect(applied).to.be.a('number');
      expect(rejected).to.be.a('number');
      recordConfigReload('applied');
      recordConfigReload('rejected');
      recordConfigReload('rejected');
      expect(await countOf('config_reloads_total', { outcome: 'applied' })).to.equal(applied! + 1);
      expect(await countOf('config_reloads_total', { outcome: 'rejected' })).to.equal(rejected! + 2);
    });
  });
});
