import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { createLogger } from '../../../../gateway/logging/logger';
import { problemHandler } from '../../../../gateway/http/problem';
import { METRIC_NAMES, metricsRoute } from '../../../../gateway/metrics';

/**
 * One exposition line: `name{labels} value`, with the label values quoted. Prometheus parses the
 * value with Go's ParseFloat, which takes NaN and Inf in any case (prom-client writes `Nan`).
 */
const SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (-?[0-9.e+-]+|nan|[+-]inf)$/i;

describe('unit: metrics/route (GET /admin/metrics)', function () {
  let server: http.Server;
  let url: string;

  before(async function () {
    const app = express();
    metricsRoute(app);
    app.use(problemHandler(createLogger({ level: 'silent' })));
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/metrics`;
  });

  after(async function () {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('answers the Prometheus text format 0.0.4, never cached', async function () {
    const response = await fetch(url);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
    expect(response.headers.get('cache-control')).to.equal('no-store');
    const lines = (await response.text()).split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    expect(lines.length).to.be.greaterThan(10);
    for (const line of lines) expect(line, line).to.match(SAMPLE);
  });

  it('describes every gateway metric and the default process metrics', async function () {
    const text = await (await fetch(url)).text();
    for (const name of Object.values(METRIC_NAMES)) expect(text, name).to.contain(`# HELP ${name} `);
    expect(text).to.match(/^# TYPE http_request_duration_seconds histogram$/m);
    expect(text).to.match(/^# TYPE config_reloads_total counter$/m);
    expect(text).to.match(/^# TYPE cache_hits_total counter$/m);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(text, name).to.contain(`# TYPE ${name} `);
    }
  });
});
