import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { newEndpointHints, type EndpointHints } from '../../../../gateway/authorizations/card-hints';
import { decideAuthorization, type AuthorizationRequest, type DecisionChecks } from '../../../../gateway/authorizations/decide';
import type { Database } from '../../../../gateway/db/database';
import { createLogger } from '../../../../gateway/logging/logger';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { makeKeyPair } from '../../../support/partners';

/**
 * Golden texts of every statement an authorization decision sends (the claim and its reads, the
 * waits, the takeover, the three recording statements, the unknown card's row, the standing read
 * and the fence): for each path, the statements in the order they are sent (their number is the
 * decision's round trips), each with its prepared statement's name, its exact text and its number
 * of parameters, compared with the texts recorded in golden/decision-statements.json. A statement
 * that changes, moves or is added fails here; `RECORD_GOLDEN=1` writes the file anew (then review
 * its diff). Real PostgreSQL: the statements run, so each path is the one the code takes.
 */
const GOLDEN = path.resolve(__dirname, '..', '..', '..', '..', '..', 'test', 'unit', 'gateway', 'authorizations', 'golden', 'decision-statements.json');

interface Sent {
  name: string;
  text: string;
  params: number;
}

describe('the statements of an authorization decision, by path (golden texts)', function () {
  this.timeout(30_000);
  let services: InProcessServices;
  const recorded: Record<string, Sent[]> = {};
  const golden: Record<string, Sent[]> = process.env.RECORD_GOLDEN === '1' ? {} : (JSON.parse(fs.readFileSync(GOLDEN, 'utf8')) as Record<string, Sent[]>);

  before(async function () {
    services = await openServices();
  });
  after(async function () {
    if (process.env.RECORD_GOLDEN === '1') {
      fs.mkdirSync(path.dirname(GOLDEN), { recursive: true });
      fs.writeFileSync(GOLDEN, `${JSON.stringify(recorded, null, 2)}\n`);
    }
    await services?.close();
  });

  /** The statements `db` sends, and the database wrapper that records them. */
  const spy = (db: Database) => {
    const sent: Sent[] = [];
    const named = db.named.bind(db);
    const statement = db.statement.bind(db);
    const query = db.query.bind(db);
    const spied = Object.assign(Object.create(db) as Database, {
      named: (name: string, text: string, params: unknown[]) => (sent.push({ name, text, params: params.length }), named(name, text, params)),
      statement: (build: Parameters<Database['statement']>[0]) =>
        statement(() => {
          const built = build();
          sent.push({ name: built.name ?? 'unnamed', text: built.text, params: built.values?.length ?? 0 });
          return built;
        }),
      query: ((text: string, params?: unknown[]) => (sent.push({ name: 'unnamed', text, params: params?.length ?? 0 }), query(text, params))) as Database['query'],
    });
    return { sent, db: spied };
  };

  const newCard = async (options: { endpoint?: boolean } = {}) => {
    const partner = await services.partners.create({ name: `golden-${crypto.randomBytes(4).toString('hex')}`, issuer: 'https://golden.example', publicKey: makeKeyPair().publicPem });
    const tenantId = (await services.partners.addTenant(partner._id, 'Fleet'))._id;
    const cardKey = `CKGD${crypto.randomBytes(7).toString('hex').toUpperCase()}`;
    await services.db.query(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date)
       VALUES ($1, $2, 'b2b', $3, $3, '5355 70** **** 0001', 'virtual', 'ACTIVE', '00', 'EUR', 'P-STD', '09/2030')`,
      [cardKey, partner._id, tenantId]
    );
    if (options.endpoint) await services.authorizationEndpoints.endpoints.create(partner._id, { url: 'https://decide.golden.example/decide' });
    return cardKey;
  };

  const purchase = (cardKey: string): AuthorizationRequest => ({
    id: `auth_${crypto.randomBytes(8).toString('hex')}`,
    transactionId: crypto.randomBytes(12).toString('hex'),
    cardId: cardKey,
    amount: 12,
    currency: 'EUR',
    type: 'PURCHASE',
    merchant: { name: 'Shop', mcc: '5411', city: 'Berlin', country: 'DE' },
    at: new Date().toISOString(),
  });

  /** A partner endpoint that approves at once. */
  const approving: DecisionChecks = { partnerEndpoint: async () => ({ ask: async () => ({ kind: 'answered', approved: true, latencyMs: 1 }) }) };

  /** Decides `request`; records what it sent under `path`, and checks it against the golden texts. */
  const decide = async (pathName: string, hints: EndpointHints, request: AuthorizationRequest, checks: DecisionChecks = {}) => {
    const { sent, db } = spy(services.db);
    const decision = await decideAuthorization({ db, log: createLogger({ level: 'silent' }), checks, endpointHints: hints }, request, Date.now() + 1700);
    recorded[pathName] = sent;
    if (process.env.RECORD_GOLDEN !== '1') {
      expect(golden[pathName], `a golden path ${pathName}`).to.not.equal(undefined);
      expect(sent.map((s) => s.name), `${pathName}: the statements, in order`).to.deep.equal(golden[pathName]!.map((s) => s.name));
      sent.forEach((s, i) => {
        expect(s.text, `${pathName}: statement ${i + 1} (${s.name}), its text`).to.equal(golden[pathName]![i]!.text);
        expect(s.params, `${pathName}: statement ${i + 1} (${s.name}), its parameters`).to.equal(golden[pathName]![i]!.params);
      });
    }
    return { decision, sent };
  };

  it('no decision endpoint: the reads, then the recording with its claim (2 statements); the card again: 1', async function () {
    const cardKey = await newCard();
    const hints = newEndpointHints();
    const first = await decide('controls-first', hints, purchase(cardKey));
    expect(first.decision).to.deep.include({ approved: true, decidedBy: 'approved' });
    expect(first.sent.map((s) => s.name)).to.deep.equal(['authorization-claim', 'authorization-record-with-claim']);
    const again = await decide('controls-remembered', hints, purchase(cardKey));
    expect(again.sent.map((s) => s.name)).to.deep.equal(['authorization-record-remembered']);
  });

  it('a decision endpoint: the claim, its reads after it the first time, the recording; with the hint, the wide claim and the recording', async function () {
    const cardKey = await newCard({ endpoint: true });
    const hints = newEndpointHints();
    const first = await decide('endpoint-first', hints, purchase(cardKey), approving);
    expect(first.decision).to.deep.include({ approved: true, decidedBy: 'partner' });
    expect(first.sent.map((s) => s.name)).to.deep.equal(['authorization-claim', 'authorization-endpoint-read', 'authorization-record']);
    const again = await decide('endpoint-hinted', hints, purchase(cardKey), approving);
    expect(again.sent.map((s) => s.name)).to.deep.equal(['authorization-claim-endpoint', 'authorization-record']);
  });

  it('an unknown card: the reads, then the decision row alone', async function () {
    const decided = await decide('unknown-card', newEndpointHints(), purchase(`CKGDUNKNOWN${crypto.randomBytes(4).toString('hex')}`));
    expect(decided.decision).to.deep.include({ approved: false, declineReason: 'card_inactive', decidedBy: 'card_state' });
    expect(decided.sent.map((s) => s.name)).to.deep.equal(['authorization-claim', 'authorization-decided-unknown-card']);
  });

  it('a repeat of a decided id: the reads, then the decision row read', async function () {
    const cardKey = await newCard();
    const request = purchase(cardKey);
    await decideAuthorization({ db: services.db, log: createLogger({ level: 'silent' }), checks: {}, endpointHints: newEndpointHints() }, request, Date.now() + 1700);
    const repeat = await decide('repeat', newEndpointHints(), request);
    expect(repeat.decision).to.deep.include({ approved: true, decidedBy: 'approved' });
    expect(repeat.sent.map((s) => s.name)).to.deep.equal(['authorization-claim', 'unnamed']);
  });

  it('an abandoned claim (its lease over): the reads, the claim read, the takeover with the endpoint reads, the recording', async function () {
    const cardKey = await newCard({ endpoint: true });
    const request = purchase(cardKey);
    await services.db.query(
      `INSERT INTO authorization_decisions (authorization_id, transaction_id, card_key, state, claim_token, lease_until) VALUES ($1, $2, $3, 'deciding', 'abandoned', now() - interval '1 second')`,
      [request.id, request.transactionId, cardKey]
    );
    const taken = await decide('takeover', newEndpointHints(), request, approving);
    expect(taken.decision).to.deep.include({ approved: true, decidedBy: 'partner' });
    expect(taken.sent.map((s) => s.name)).to.deep.equal(['authorization-claim', 'unnamed', 'authorization-takeover-endpoint', 'authorization-record']);
  });

  it('a purchase with a network token: the claim reading the card through the token, then the recording with the token\'s columns (the card purchases\' statements untouched)', async function () {
    const cardKey = await newCard();
    const partnerId = (await services.db.query<{ partner_id: string }>('SELECT partner_id FROM cards WHERE card_key = $1', [cardKey])).rows[0].partner_id;
    const reference = `tref_${crypto.randomBytes(12).toString('hex')}`;
    const tokenId = `tok_${crypto.randomBytes(12).toString('hex')}`;
    await services.db.query(
      `INSERT INTO tokens (id, partner_id, card_key, processor_ref, wallet_provider, token_requestor_id, last4, token_exp_date, device, status, history, version)
       VALUES ($1, $2, $3, $4, 'google_pay', '50120834693', '1234', '11/2029', '{"type":"phone"}'::jsonb, 'active', '[]'::jsonb, 1)`,
      [tokenId, partnerId, cardKey, reference]
    );
    const request: AuthorizationRequest = { ...purchase(cardKey), token: { reference, walletProvider: 'google_pay' } };
    const decided = await decide('token-purchase', newEndpointHints(), request);
    expect(decided.decision).to.deep.include({ approved: true, decidedBy: 'approved' });
    expect(decided.sent.map((s) => s.name)).to.deep.equal(['authorization-claim-token', 'authorization-record-token']);
    const row = (await services.db.query('SELECT token_id, wallet_provider FROM card_transactions WHERE id = $1', [request.transactionId])).rows[0];
    expect(row).to.deep.equal({ token_id: tokenId, wallet_provider: 'google_pay' });
  });

  it('a transaction recorded before (a stand-in): the recording with its claim writes nothing, then claimed, recorded, what stands read and fenced', async function () {
    const cardKey = await newCard();
    const first = purchase(cardKey);
    await decideAuthorization({ db: services.db, log: createLogger({ level: 'silent' }), checks: {}, endpointHints: newEndpointHints() }, first, Date.now() + 1700);
    const standing = await decide('stand-in', newEndpointHints(), { ...purchase(cardKey), transactionId: first.transactionId });
    expect(standing.decision).to.deep.include({ approved: true });
    expect(standing.sent.map((s) => s.name)).to.deep.equal(['authorization-claim', 'authorization-record-with-claim', 'authorization-claim', 'authorization-record', 'unnamed', 'unnamed']);
  });
});
