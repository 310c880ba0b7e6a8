import http from 'node:http';
import { expect } from 'chai';
import express from 'express';
import { carriesBody, holdsContent, jsonBody, jsonDepth, MAX_BODY_DEPTH, type JsonBodyOptions } from '../../../../gateway/http/body';
import { problemHandler } from '../../../../gateway/http/problem';
import { createLogger } from '../../../../gateway/logging/logger';
import { listenLocally } from '../../../support/in-process';
import { ABSENT_BODIES, rawRequest, type RawBody } from '../../../support/raw-http';

describe('unit: http/body jsonDepth', function () {
  const table: { value: unknown; depth: number }[] = [
    { value: 'text', depth: 0 },
    { value: null, depth: 0 },
    { value: {}, depth: 1 },
    { value: [1, 2], depth: 1 },
    { value: [[1], { a: {} }], depth: 3 },
    { value: [{ name: 'dailyPurchase', value: 1 }], depth: 2 },
  ];
  for (const row of table) {
    it(`${JSON.stringify(row.value)} → ${row.depth}`, function () {
      expect(jsonDepth(row.value)).to.equal(row.depth);
    });
  }

  it('counts 100,000 nested arrays and objects without recursion, and stops early past a limit', function () {
    const arrays = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(jsonDepth(arrays)).to.equal(100_000);
    expect(jsonDepth(arrays, MAX_BODY_DEPTH)).to.equal(MAX_BODY_DEPTH + 1);
    const objects = JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`);
    expect(jsonDepth(objects)).to.equal(100_000);
  });
});

describe('unit: http/body holdsContent (anything but JSON whitespace, and a BOM at the start)', function () {
  const table: { description: string; text: string; atStart?: boolean; expected: boolean }[] = [
    { description: 'no bytes', text: '', expected: false },
    { description: 'space, tab, CR, LF', text: ' \t\r\n', expected: false },
    { description: 'a UTF-8 BOM at the start', text: '\uFEFF', expected: false },
    { description: 'a BOM and whitespace', text: '\uFEFF \n', expected: false },
    { description: 'a BOM not at the start of the body', text: '\uFEFF', atStart: false, expected: true },
    { description: '{}', text: '{}', expected: true },
    { description: 'whitespace, then a character', text: '  \n x', expected: true },
    { description: 'a form feed (not JSON whitespace)', text: '\f', expected: true },
    { description: 'a no-break space (not JSON whitespace)', text: '\u00A0', expected: true },
  ];
  for (const row of table) {
    it(`${row.description} → ${row.expected}`, function () {
      expect(holdsContent(Buffer.from(row.text, 'utf8'), row.atStart)).to.equal(row.expected);
    });
  }
});

/**
 * The partner app's body parser (`recordReceived`) tells "no body" from `{}`: body-parser answers
 * `{}` for both, which let a PUT without a body clear spend controls (issue 32). Each request is sent
 * with its exact framing; the probe answers what the parser recorded and parsed.
 */
describe('unit: http/body jsonBody records whether a body was received', function () {
  let url: string;
  let close: () => Promise<void>;
  let plainUrl: string;
  let closePlain: () => Promise<void>;

  function probeApp(options: JsonBodyOptions) {
    const app = express();
    app.use(jsonBody(options));
    app.all('/probe', (req, res) => {
      res.json({ received: carriesBody(req), recorded: req.bodyReceived ?? null, body: req.body ?? null });
    });
    app.use(problemHandler(createLogger({ level: 'silent' })));
    return listenLocally(http.createServer(app));
  }

  before(async function () {
    ({ url, close } = await probeApp({ recordReceived: true }));
    ({ url: plainUrl, close: closePlain } = await probeApp({}));
  });
  after(async function () {
    await close?.();
    await closePlain?.();
  });

  for (const shape of ABSENT_BODIES) {
    it(`${shape.description}: no body (parsed as {}, never an error)`, async function () {
      const response = await rawRequest(url, 'POST', '/probe', {}, shape);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.deep.include({ received: false, body: {} });
    });
  }

  const withContent: { description: string; body: RawBody; parsed: unknown }[] = [
    { description: '{}', body: { description: '', framing: 'length', chunks: ['{}'], contentType: 'application/json' }, parsed: {} },
    { description: '{} between whitespace, chunked', body: { description: '', framing: 'chunked', chunks: [' \r\n', '{', '}', '\n'], contentType: 'application/json' }, parsed: {} },
    { description: '[] as application/merge-patch+json', body: { description: '', framing: 'length', chunks: ['[]'], contentType: 'application/merge-patch+json' }, parsed: [] },
    { description: 'JSON without a Content-Type (read, not parsed)', body: { description: '', framing: 'length', chunks: ['{"a":1}'] }, parsed: {} },
    { description: 'text/plain after whitespace (read, not parsed)', body: { description: '', framing: 'chunked', chunks: ['  ', '\n', 'x'], contentType: 'text/plain' }, parsed: {} },
    { description: 'a BOM then {} (the JSON parser drops the BOM)', body: { description: '', framing: 'length', chunks: ['\uFEFF{"a":1}'], contentType: 'application/json' }, parsed: { a: 1 } },
  ];
  for (const row of withContent) {
    it(`${row.description}: a body`, async function () {
      const response = await rawRequest(url, 'POST', '/probe', {}, row.body);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.deep.equal({ received: true, recorded: true, body: row.parsed });
    });
  }

  it('a body of only a BOM is no body (the JSON parser reads it as {})', async function () {
    const response = await rawRequest(url, 'PUT', '/probe', {}, { description: '', framing: 'length', chunks: ['\uFEFF'], contentType: 'application/json' });
    expect(response.body).to.deep.equal({ received: false, recorded: false, body: {} });
  });

  it('malformed JSON stays 400 malformed_json; a JSON body over 64 KB 413, of whitespace too', async function () {
    const malformed = await rawRequest(url, 'POST', '/probe', {}, { description: '', framing: 'length', chunks: [' {"a":'], contentType: 'application/json' });
    expect([malformed.status, malformed.body.code]).to.deep.equal([400, 'malformed_json']);
    const large = await rawRequest(url, 'POST', '/probe', {}, { description: '', framing: 'length', chunks: [' '.repeat(65 * 1024)], contentType: 'application/json' });
    expect([large.status, large.body.code]).to.deep.equal([413, 'payload_too_large']);
  });

  it('a body of another type holding more than 64 KB of whitespace counts as a body (the read stops there)', async function () {
    const response = await rawRequest(url, 'POST', '/probe', {}, { description: '', framing: 'length', chunks: [' '.repeat(70 * 1024)], contentType: 'text/plain' });
    expect(response.body).to.deep.include({ received: true });
  });

  it('a body of another type is read only to its first byte that is not whitespace; the rest is discarded and the connection kept', async function () {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (body: string, contentType: string) =>
      new Promise<{ status: number; body: any; reused: boolean }>((resolve, reject) => {
        const req = http.request(`${url}/probe`, { method: 'POST', agent, headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      const first = await send(`x${'y'.repeat(200 * 1024)}`, 'text/plain');
      expect(first).to.deep.include({ status: 200, reused: false });
      expect(first.body.received).to.equal(true);
      const second = await send('{"b":2}', 'application/json');
      expect(second).to.deep.equal({ status: 200, body: { received: true, recorded: true, body: { b: 2 } }, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('without recordReceived (the admin API): nothing recorded, whitespace is malformed JSON, another type is not read', async function () {
    const whitespace = await rawRequest(plainUrl, 'POST', '/probe', {}, { description: '', framing: 'length', chunks: [' \r\n'], contentType: 'application/json' });
    expect([whitespace.status, whitespace.body.code]).to.deep.equal([400, 'malformed_json']);
    const text = await rawRequest(plainUrl, 'POST', '/probe', {}, { description: '', framing: 'length', chunks: ['x'], contentType: 'text/plain' });
    expect(text.body).to.deep.equal({ received: false, recorded: null, body: {} });
    const json = await rawRequest(plainUrl, 'POST', '/probe', {}, { description: '', framing: 'length', chunks: ['{}'], contentType: 'application/json' });
    expect(json.body).to.deep.equal({ received: false, recorded: null, body: {} });
  });
});
