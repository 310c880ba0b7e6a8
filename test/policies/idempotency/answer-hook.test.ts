import crypto from 'node:crypto';
import { expect } from 'chai';
import type { RequestHandler } from 'express';
import { GatewayError } from '../../../gateway/errors';
import { sendJson } from '../../../gateway/http/send-json';
import { runWithFacts } from '../../../gateway/handlers/context';
import { createLogger } from '../../../gateway/logging/logger';
import { idempotency } from '../../../policies/idempotency/idempotency';
import { makeKeyPair } from '../../support/partners';
import { openServices, policyContext, serve, type InProcessServices } from '../../support/in-process';

/**
 * The idempotency policy records a claimed key's answer through the response's answer hook
 * (gateway/http/answer.ts), not by patching `res.end`: the answer is stored before its bytes leave,
 * a problem answer goes through the hook too, and an answer written past the hook releases the key.
 */
describe('policies: idempotency records the answer through the answer hook', function () {
  let services: InProcessServices;
  let partnerId: string;
  const log = createLogger({ level: 'silent' });

  before(async function () {
    services = await openServices();
    partnerId = (await services.partners.create({ name: 'hook', issuer: 'https://hook.example', publicKey: makeKeyPair().publicPem }))._id;
  });
  after(async function () {
    await services?.close();
  });

  /** Serves the idempotency step (ttl 1 h) in front of `handler`, as the partner `partnerId`. */
  async function withStep(handler: RequestHandler) {
    const asPartner: RequestHandler = (req, _res, next) => {
      req.partner = { _id: partnerId } as NonNullable<typeof req.partner>;
      next();
    };
    return serve([asPartner, idempotency({ ttlHours: 1 }, policyContext(services)), handler], log);
  }
  const row = async (key: string) =>
    (await services.db.query<{ state: string; response_status: number | null; response_bytes: Buffer | null; response_headers: Record<string, string> | null }>(
      'SELECT state, response_status, response_bytes, response_headers FROM idempotency_keys WHERE partner_id = $1 AND key = $2',
      [partnerId, key]
    )).rows[0];

  it('stores the exact answer before the partner receives it, and replays it', async function () {
    const server = await withStep((_req, res) => {
      res.setHeader('Location', '/probe/1');
      sendJson(res, 201, { id: 1, b: 'é' });
    });
    try {
      const key = `hook-${crypto.randomUUID()}`;
      const first = await fetch(`${server.url}/probe`, { headers: { 'idempotency-key': key } });
      const bytes = Buffer.from(await first.arrayBuffer());
      expect(first.status).to.equal(201);
      // Read as soon as the answer arrived: it was recorded before it was sent.
      const stored = await row(key);
      expect(stored).to.include({ state: 'completed', response_status: 201 });
      expect(stored!.response_bytes!.equals(bytes)).to.equal(true);
      expect(stored!.response_headers).to.deep.equal({ 'cache-control': 'no-store', 'content-type': 'application/json; charset=utf-8', location: '/probe/1' });
      const again = await fetch(`${server.url}/probe`, { headers: { 'idempotency-key': key } });
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).to.equal(true);
    } finally {
      await server.close();
    }
  });

  it("records the answer a handler returns (the operation policy writes it), whatever its kind: a 204 too", async function () {
    let runs = 0;
    const server = await withStep(
      runWithFacts(async (_facts, req) => {
        runs += 1;
        return req.query.empty === undefined ? { status: 201, body: { id: 2, b: 'é' }, headers: { Location: '/probe/2' } } : { status: 204 };
      }, () => ({}))
    );
    try {
      const key = `hook-${crypto.randomUUID()}`;
      const first = await fetch(`${server.url}/probe`, { headers: { 'idempotency-key': key } });
      const bytes = Buffer.from(await first.arrayBuffer());
      expect(first.status).to.equal(201);
      const stored = await row(key);
      expect(stored).to.include({ state: 'completed', response_status: 201 });
      expect(stored!.response_bytes!.equals(bytes)).to.equal(true);
      expect(stored!.response_headers).to.deep.equal({ 'cache-control': 'no-store', 'content-type': 'application/json; charset=utf-8', location: '/probe/2' });
      const again = await fetch(`${server.url}/probe`, { headers: { 'idempotency-key': key } });
      expect(again.status).to.equal(201);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.headers.get('location')).to.equal('/probe/2');
      expect(Buffer.from(await again.arrayBuffer()).equals(bytes)).to.equal(true);
      const emptyKey = `hook-${crypto.randomUUID()}`;
      expect((await fetch(`${server.url}/probe?empty=1`, { headers: { 'idempotency-key': emptyKey } })).status).to.equal(204);
      expect(await row(emptyKey)).to.include({ state: 'completed', response_status: 204 });
      const emptyAgain = await fetch(`${server.url}/probe?empty=1`, { headers: { 'idempotency-key': emptyKey } });
      expect(emptyAgain.status).to.equal(204);
      expect(emptyAgain.headers.get('idempotent-replayed')).to.equal('true');
      expect(emptyAgain.headers.get('content-type')).to.equal(null);
      expect(runs, 'the handler ran once per key').to.equal(2);
    } finally {
      await server.close();
    }
  });

  it('records a problem answer (4xx) through the hook, and releases the key of a 5xx', async function () {
    let status = 409;
    const server = await withStep((_req, _res, next) => next(new GatewayError(status === 409 ? 'invalid_transition' : 'upstream_error', 'no')));
    try {
      const refused = `hook-${crypto.randomUUID()}`;
      const answer = await fetch(`${server.url}/probe`, { headers: { 'idempotency-key': refused } });
      expect(answer.status).to.equal(409);
      expect(answer.headers.get('content-type')).to.equal('application/problem+json; charset=utf-8');
      expect(await row(refused)).to.include({ state: 'completed', response_status: 409 });
      status = 502;
      const failed = `hook-${crypto.randomUUID()}`;
      expect((await fetch(`${server.url}/probe`, { headers: { 'idempotency-key': failed } })).status).to.equal(502);
      expect((await row(failed))!.state).to.equal('released');
    } finally {
      await server.close();
    }
  });

  it('releases the key of an answer written past the hook (it cannot be replayed), once it is sent', async function () {
    const server = await withStep((_req, res) => {
      res.status(200).send('written past the hook');
    });
    try {
      const key = `hook-${crypto.randomUUID()}`;
      const answer = await fetch(`${server.url}/probe`, { headers: { 'idempotency-key': key } });
      expect(await answer.text()).to.equal('written past the hook');
      // Released on 'finish', after the bytes left: wait for that state, not for a fixed time.
      const deadline = Date.now() + 5_000;
      while ((await row(key))!.state !== 'released') {
        if (Date.now() > deadline) throw new Error('the key was not released');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await server.close();
    }
  });
});
