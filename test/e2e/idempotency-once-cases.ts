// The tests of one operation per Idempotency-Key (issue 12), shared by the files that run them on
// real PostgreSQL and on the embedded database: two files, so that a parallel run takes them in two
// workers at once.
import crypto from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { startSandboxes, type Sandboxes } from '../../sandbox';
import { api, cardBody, individualBody, sandboxControl } from '../support/api';
import { HIGH_RATE_LIMITS, startGatewayProcess, type GatewayProcess } from '../support/gateway-process';
import { registerPartner, type TestPartner } from '../support/partners';
import { startTamperingUpstream, type TamperingUpstream } from '../support/tampering-upstream';
import { waitFor } from '../support/wait';


/** An answer as the partner's HTTP client received it: the exact text, not a parse of it. */
interface RawAnswer {
  status: number;
  text: string;
  headers: Headers;
}

/** A 409 `idempotency_in_progress`: the key's first request still runs. */
function inProgress(answer: { status: number; text: string }): boolean {
  return answer.status === 409 && JSON.parse(answer.text).code === 'idempotency_in_progress';
}

/**
 * Issue 12, items 2 and 3: an Idempotency-Key stands for one operation. A replay is the first
 * answer's stored bytes and headers; a client that gives up and retries with the same key never
 * makes the gateway do the work twice, on our side or upstream. Each test runs on real PostgreSQL
 * (a database of the gateway's own) and on the embedded database.
 */
export function describeOneOperationPerKey(database: 'postgres' | 'embedded'): void {
  describe(`e2e: one operation per Idempotency-Key, replayed byte for byte (${database})`, function () {
    this.timeout(90_000);
    let sandboxes: Sandboxes;
    let issuer: TamperingUpstream;
    let accounts: TamperingUpstream;
    let gateway: GatewayProcess;
    let partner: TestPartner;
    let db: Client | undefined;
    let ada: any;

    before(async function () {
      sandboxes = await startSandboxes();
      issuer = await startTamperingUpstream(sandboxes.issuer.url);
      accounts = await startTamperingUpstream(sandboxes.accounts.url);
      gateway = await startGatewayProcess({
        env: { ...HIGH_RATE_LIMITS, ISSUER_URL: issuer.url, PROCESSING_URL: sandboxes.processing.url, ACCOUNTS_URL: accounts.url, UPSTREAM_TIMEOUT_MS: '10000' },
        ...(database === 'postgres' ? { ownDatabase: true } : { embedded: true }),
      });
      partner = await registerPartner(gateway, `once-${database}`);
      if (gateway.databaseUrl) {
        db = new Client({ connectionString: gateway.databaseUrl });
        await db.connect();
      }
      ada = (await api(gateway, partner, 'POST', '/individual/accounts', { body: individualBody() })).body;
    });

    afterEach(function () {
      issuer.clear();
      accounts.clear();
    });

    after(async function () {
      await db?.end();
      await gateway?.stop();
      await issuer?.close();
      await accounts?.close();
      await sandboxes?.close();
    });

    async function send(path: string, body: unknown, key: string, signal?: AbortSignal): Promise<RawAnswer> {
      const response = await fetch(`${gateway.baseUrl}/api/partner${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await partner.token()}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
        signal,
      });
      return { status: response.status, text: await response.text(), headers: response.headers };
    }

    /** The first answer, then 20 concurrent retries with the same key: each the same status, bytes and headers. */
    async function expectByteIdenticalReplays(path: string, body: unknown, status: number): Promise<void> {
      const key = `replay-${crypto.randomUUID()}`;
      const first = await send(path, body, key);
      expect(first.status, first.text).to.equal(status);
      const replays = await Promise.all(Array.from({ length: 20 }, () => send(path, body, key)));
      for (const [i, replay] of replays.entries()) {
        expect(replay.status, `replay ${i}: ${replay.text}`).to.equal(first.status);
        expect(replay.text, `replay ${i}`).to.equal(first.text);
        expect(replay.headers.get('idempotent-replayed'), `replay ${i}`).to.equal('true');
        for (const header of ['content-type', 'cache-control', 'location', 'content-length']) {
          expect(replay.headers.get(header), `replay ${i}: ${header}`).to.equal(first.headers.get(header));
        }
        expect(replay.headers.get('x-request-id'), `replay ${i}: its own request id`).to.not.equal(first.headers.get('x-request-id'));
      }
      expect(first.headers.get('idempotent-replayed')).to.equal(null);
    }

    it('20 concurrent replays of a create-individual are byte-identical to the first answer', async function () {
      await expectByteIdenticalReplays('/individual/accounts', individualBody({ firstName: 'Replayed' }), 201);
    });

    it('20 concurrent replays of a virtual card issue are byte-identical to the first answer', async function () {
      await expectByteIdenticalReplays(`/individual/accounts/${ada._id}/cards/virtual`, cardBody(ada.clientID), 201);
    });

    it('20 concurrent replays of a replace (the replay-only step before ownership) are byte-identical to the first answer', async function () {
      const card = (await api(gateway, partner, 'POST', `/individual/accounts/${ada._id}/cards/physical`, { body: cardBody(ada.clientID) })).body;
      await expectByteIdenticalReplays(`/cards/${card.cardKey}/replace`, { expDate: card.expDate, reason: 'damaged' }, 200);
    });

    it('a replayed problem (a stored 4xx) is byte-identical too', async function () {
      await expectByteIdenticalReplays('/individual/accounts', individualBody({ lastName: 'SANDBOX-REJECT' }), 422);
    });

    /**
     * Sends the creation with the upstream's answer held back; once the upstream has done the work,
     * disconnects: the handler is mid-flight. Retries once with the same key while the answer is
     * still held (the first request still runs), then lets the answer go and retries until the
     * answer is no longer 409 `idempotency_in_progress`; returns every retry answer.
     */
    async function disconnectThenRetry(upstream: TamperingUpstream, upstreamPath: string, path: string, body: unknown) {
      const key = `gone-${crypto.randomUUID()}`;
      const held = upstream.hold('POST', upstreamPath);
      const abort = new AbortController();
      const first = send(path, body, key, abort.signal).then(
        (answer) => `answered ${answer.status}: ${answer.text}`,
        (err: Error) => err.name
      );
      await Promise.race([held.arrived, first]);
      abort.abort();
      expect(await first, 'the client gave up before the answer').to.equal('AbortError');
      const retries: RawAnswer[] = [await send(path, body, key)];
      held.release();
      const final = await waitFor('a retry that is not in progress', async () => {
        const retry = await send(path, body, key);
        retries.push(retry);
        return inProgress(retry) ? undefined : retry;
      });
      return { key, retries, final };
    }

    it('a client that disconnects during a create-individual and retries with the same key gets the one individual: one record, one upstream account', async function () {
      const accountsBefore = (await sandboxControl(sandboxes.accounts.url, 'GET', '/__sandbox/requests?method=POST&path=/accounts')).length;
      const body = individualBody({ firstName: 'Gone', lastName: `Away${crypto.randomInt(1e6)}` });
      const { retries, final } = await disconnectThenRetry(accounts, '/accounts', '/individual/accounts', body);

      expect(final.status, final.text).to.equal(201);
      expect(final.headers.get('idempotent-replayed'), 'the retry replays the first operation').to.equal('true');
      expect(inProgress(retries[0]), `the first retry arrives while the first request still runs: ${retries[0].status} ${retries[0].text}`).to.equal(true);
      const created = JSON.parse(final.text);
      const accountCalls = (await sandboxControl(sandboxes.accounts.url, 'GET', '/__sandbox/requests?method=POST&path=/accounts')).slice(accountsBefore);
      expect(accountCalls, 'upstream accounts created').to.have.length(1);
      const list = await api(gateway, partner, 'GET', '/individual/accounts?limit=100');
      const named = list.body.data.filter((i: any) => i.lastName === body.lastName);
      expect(named.map((i: any) => i._id), 'individuals of ours').to.deep.equal([created._id]);
      if (db) {
        const rows = await db.query('SELECT count(*)::int AS n FROM individual_onboardings o JOIN users u ON u.id = o.user_id WHERE o.partner_id = $1 AND u.last_name = $2', [partner.id, body.lastName]);
        expect(rows.rows[0].n, 'onboarding rows, pending ones included').to.equal(1);
      }
    });

    it('a client that disconnects during a virtual card issue and retries with the same key gets the one card: one row, one issuer POST /cards', async function () {
      const issuerBefore = (await sandboxControl(sandboxes.issuer.url, 'GET', '/__sandbox/requests?method=POST&path=/cards')).length;
      const cardsBefore = (await api(gateway, partner, 'GET', `/individual/accounts/${ada._id}/cards`)).body;
      const { retries, final } = await disconnectThenRetry(issuer, '/cards', `/individual/accounts/${ada._id}/cards/virtual`, cardBody(ada.clientID, { embossedName: 'GONE-AWAY' }));

      expect(final.status, final.text).to.equal(201);
      expect(final.headers.get('idempotent-replayed')).to.equal('true');
      expect(inProgress(retries[0]), `${retries[0].status} ${retries[0].text}`).to.equal(true);
      const issuerCalls = (await sandboxControl(sandboxes.issuer.url, 'GET', '/__sandbox/requests?method=POST&path=/cards')).slice(issuerBefore);
      expect(issuerCalls, 'issuer cards created').to.have.length(1);
      const cardsAfter = (await api(gateway, partner, 'GET', `/individual/accounts/${ada._id}/cards`)).body;
      const count = (list: any) => (Array.isArray(list) ? list : list.data).length;
      expect(count(cardsAfter) - count(cardsBefore), 'cards of ours').to.equal(1);
      if (db) {
        const rows = await db.query('SELECT card_key FROM cards WHERE partner_id = $1 AND card_key = $2', [partner.id, JSON.parse(final.text).cardKey]);
        expect(rows.rowCount).to.equal(1);
      }
    });
  });
}
