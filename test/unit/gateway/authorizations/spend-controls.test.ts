import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  checkStaticControls,
  applicableControlsColumn,
  applicableControlsOf,
  checkVelocityCounts,
  readSpendControls,
  velocityCountsColumn,
  velocityGate,
  saveSpendControls,
  type ApplicableSpendControls,
  type PurchaseFacts,
  type SpendControls,
} from '../../../../gateway/authorizations/spend-controls';
import { Database, type Queryable } from '../../../../gateway/db/database';
import { migrate, readMigrations } from '../../../../gateway/db/migrate';
import { createLogger } from '../../../../gateway/logging/logger';
import { newObjectId } from '../../../../gateway/ids';
import { spendControls as spendControlsSchema, VELOCITY_WINDOWS, type VelocityWindow } from '../../../../gateway/schemas/spend-controls';
import { bodyAjv, decimalsOf, invalidParamsOf } from '../../../../gateway/validation/ajv';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { makeKeyPair } from '../../../support/partners';
import { createOwnDatabase, runDatabaseUrl, type RunDatabase } from '../../../support/test-database';

const NONE: ApplicableSpendControls = { partner: {}, card: {} };

/** A purchase's place in the velocity count: whose card, and when. */
interface VelocityPurchase {
  partnerId: string;
  cardKey: string;
  amount: number;
  at: Date;
}

/** The SQL the decision's claim reads the velocity counts with (velocityCountsColumn), for one card and these controls. */
const COUNTS_SQL = `SELECT ${velocityCountsColumn('$1::jsonb', 'c', '$4')} AS velocity FROM (SELECT $2::text AS partner_id, $3::text AS card_key) AS c`;
const countsParams = (controls: ApplicableSpendControls, p: VelocityPurchase) => [
  JSON.stringify([
    { card_key: null, controls: controls.partner },
    { card_key: p.cardKey, controls: controls.card },
  ]),
  p.partnerId,
  p.cardKey,
  p.at.toISOString(),
];

/** The velocity pre-check as the decision makes it: the counts its claim reads, checked by checkVelocityCounts. */
async function checkVelocity(db: Queryable, controls: ApplicableSpendControls, p: VelocityPurchase) {
  const { rows } = await db.query<{ velocity: Record<string, string | number> | null }>(COUNTS_SQL, countsParams(controls, p));
  return checkVelocityCounts(controls, rows[0]!.velocity, p);
}
const purchase = (over: Partial<PurchaseFacts> = {}): PurchaseFacts => ({ amount: 10, mcc: '5411', country: 'DE', ...over });

describe('unit: authorizations/spend-controls checkStaticControls (pure)', function () {
  const table: { description: string; controls: ApplicableSpendControls; purchase: PurchaseFacts; expected: ReturnType<typeof checkStaticControls> }[] = [
    { description: 'no controls: passes', controls: NONE, purchase: purchase(), expected: undefined },
    { description: "the card's blocked MCC", controls: { partner: {}, card: { blockedMccs: ['7995'] } }, purchase: purchase({ mcc: '7995' }), expected: { declineReason: 'mcc_blocked', rule: 'card.blockedMccs' } },
    { description: "the partner's blocked MCC", controls: { partner: { blockedMccs: ['7995'] }, card: {} }, purchase: purchase({ mcc: '7995' }), expected: { declineReason: 'mcc_blocked', rule: 'partner.blockedMccs' } },
    { description: "the partner's controls before the card's", controls: { partner: { blockedMccs: ['7995'] }, card: { blockedMccs: ['7995'] } }, purchase: purchase({ mcc: '7995' }), expected: { declineReason: 'mcc_blocked', rule: 'partner.blockedMccs' } },
    { description: 'an MCC an allow list does not name', controls: { partner: {}, card: { allowedMccs: ['5411', '5812'] } }, purchase: purchase({ mcc: '5999' }), expected: { declineReason: 'mcc_blocked', rule: 'card.allowedMccs' } },
    { description: 'an MCC the allow list names', controls: { partner: {}, card: { allowedMccs: ['5411', '5812'] } }, purchase: purchase({ mcc: '5812' }), expected: undefined },
    { description: 'no MCC against an allow list', controls: { partner: { allowedMccs: ['5411'] }, card: {} }, purchase: purchase({ mcc: null }), expected: { declineReason: 'mcc_blocked', rule: 'partner.allowedMccs' } },
    { description: 'no MCC against a block list only: passes', controls: { partner: { blockedMccs: ['7995'] }, card: {} }, purchase: purchase({ mcc: undefined }), expected: undefined },
    { description: 'a block list before an allow list of one scope', controls: { partner: {}, card: { allowedMccs: ['7995'], blockedMccs: ['7995'] } }, purchase: purchase({ mcc: '7995' }), expected: { declineReason: 'mcc_blocked', rule: 'card.blockedMccs' } },
    { description: 'the partner allows, the card blocks: both must pass', controls: { partner: { allowedMccs: ['5411'] }, card: { blockedMccs: ['5411'] } }, purchase: purchase({ mcc: '5411' }), expected: { declineReason: 'mcc_blocked', rule: 'card.blockedMccs' } },
    { description: "the card allows, the partner's allow list does not", controls: { partner: { allowedMccs: ['5812'] }, card: { allowedMccs: ['5411'] } }, purchase: purchase({ mcc: '5411' }), expected: { declineReason: 'mcc_blocked', rule: 'partner.allowedMccs' } },
    { description: 'a blocked country', controls: { partner: {}, card: { blockedCountries: ['RU'] } }, purchase: purchase({ country: 'RU' }), expected: { declineReason: 'country_blocked', rule: 'card.blockedCountries' } },
    { description: 'a country as the processor may write it (lower case)', controls: { partner: { allowedCountries: ['DE', 'FR'] }, card: {} }, purchase: purchase({ country: 'fr' }), expected: undefined },
    { description: 'a country outside the allow list', controls: { partner: { allowedCountries: ['DE', 'FR'] }, card: {} }, purchase: purchase({ country: 'US' }), expected: { declineReason: 'country_blocked', rule: 'partner.allowedCountries' } },
    { description: 'no country against an allow list', controls: { partner: {}, card: { allowedCountries: ['DE'] } }, purchase: purchase({ country: null }), expected: { declineReason: 'country_blocked', rule: 'card.allowedCountries' } },
    { description: 'the amount at the maximum: passes', controls: { partner: {}, card: { maxAmountPerTransaction: 100.1 } }, purchase: purchase({ amount: 100.1 }), expected: undefined },
    { description: 'a cent above the maximum', controls: { partner: {}, card: { maxAmountPerTransaction: 100.1 } }, purchase: purchase({ amount: 100.11 }), expected: { declineReason: 'amount_exceeded', rule: 'card.maxAmountPerTransaction' } },
    { description: "the partner's lower maximum", controls: { partner: { maxAmountPerTransaction: 50 }, card: { maxAmountPerTransaction: 500 } }, purchase: purchase({ amount: 60 }), expected: { declineReason: 'amount_exceeded', rule: 'partner.maxAmountPerTransaction' } },
    { description: "the card's lower maximum", controls: { partner: { maxAmountPerTransaction: 500 }, card: { maxAmountPerTransaction: 50 } }, purchase: purchase({ amount: 60 }), expected: { declineReason: 'amount_exceeded', rule: 'card.maxAmountPerTransaction' } },
    {
      description: 'the MCC before the country before the amount',
      controls: { partner: { maxAmountPerTransaction: 1 }, card: { blockedCountries: ['DE'], blockedMccs: ['5411'] } },
      purchase: purchase({ amount: 10 }),
      expected: { declineReason: 'mcc_blocked', rule: 'card.blockedMccs' },
    },
    { description: 'the country before the amount', controls: { partner: { maxAmountPerTransaction: 1 }, card: { blockedCountries: ['DE'] } }, purchase: purchase({ amount: 10 }), expected: { declineReason: 'country_blocked', rule: 'card.blockedCountries' } },
    { description: 'velocity rules alone: nothing static to fail', controls: { partner: { velocity: [{ window: '1h', maxCount: 1 }] }, card: {} }, purchase: purchase(), expected: undefined },
    {
      description: "a token's wallet the card blocks, before its blocked MCC",
      controls: { partner: {}, card: { blockedWalletProviders: ['google_pay'], blockedMccs: ['5411'] } },
      purchase: purchase({ walletProvider: 'google_pay' }),
      expected: { declineReason: 'wallet_provider_blocked', rule: 'card.blockedWalletProviders' },
    },
    { description: "a wallet outside the partner's allow list", controls: { partner: { allowedWalletProviders: ['apple_pay'] }, card: {} }, purchase: purchase({ walletProvider: 'merchant' }), expected: { declineReason: 'wallet_provider_blocked', rule: 'partner.allowedWalletProviders' } },
    { description: 'an allowed wallet passes', controls: { partner: { allowedWalletProviders: ['apple_pay'] }, card: { blockedWalletProviders: ['merchant'] } }, purchase: purchase({ walletProvider: 'apple_pay' }), expected: undefined },
    { description: 'a purchase with the card itself passes the wallet lists', controls: { partner: { allowedWalletProviders: ['apple_pay'] }, card: {} }, purchase: purchase(), expected: undefined },
  ];
  for (const row of table) {
    it(`${row.description} → ${row.expected ? `${row.expected.declineReason} (${row.expected.rule})` : 'passes'}`, function () {
      const before = structuredClone(row.controls);
      expect(checkStaticControls(row.controls, row.purchase)).to.deep.equal(row.expected);
      expect(row.controls, 'not changed').to.deep.equal(before);
    });
  }
});

describe('unit: the spend-controls body schema', function () {
  const validate = bodyAjv.getSchema(spendControlsSchema.$id) ?? bodyAjv.compile(spendControlsSchema);
  const valid: SpendControls[] = [
    {},
    { maxAmountPerTransaction: 19.99 },
    { maxAmountPerTransaction: 0.07, velocity: [{ window: '30d', maxAmount: 1.15 }] },
    { allowedMccs: ['5411'], blockedMccs: [], allowedCountries: ['DE'], blockedCountries: [] },
    { velocity: [{ window: '1h', maxCount: 3 }, { window: '24h', maxAmount: 500 }, { window: '7d', maxCount: 10, maxAmount: 1000 }, { window: '30d', maxCount: 40 }] },
    { allowedMccs: Array.from({ length: 200 }, (_, i) => String(1000 + i)) },
    { allowedWalletProviders: ['apple_pay', 'google_pay', 'samsung_pay', 'merchant'], blockedWalletProviders: [] },
    { blockedWalletProviders: ['merchant'] },
  ];
  for (const body of valid) {
    it(`accepts ${JSON.stringify(body).slice(0, 80)}`, function () {
      expect(validate(structuredClone(body)), JSON.stringify(validate.errors)).to.equal(true);
    });
  }
  const invalid: [string, unknown, string][] = [
    ['an empty velocity rule', { velocity: [{ window: '1h' }] }, 'velocity.0.maxCount'],
    ['an unknown window', { velocity: [{ window: '2h', maxCount: 1 }] }, 'velocity.0.window'],
    ['five velocity rules', { velocity: Array.from({ length: 5 }, () => ({ window: '1h', maxCount: 1 })) }, 'velocity'],
    ['a negative amount', { maxAmountPerTransaction: -5 }, 'maxAmountPerTransaction'],
    ['a zero amount', { velocity: [{ window: '1h', maxAmount: 0 }] }, 'velocity.0.maxAmount'],
    ['three decimals', { maxAmountPerTransaction: 1.005 }, 'maxAmountPerTransaction'],
    ['a fractional count', { velocity: [{ window: '1h', maxCount: 1.5 }] }, 'velocity.0.maxCount'],
    ['a 3-digit MCC', { blockedMccs: ['599'] }, 'blockedMccs.0'],
    ['an MCC as a number', { allowedMccs: [5411] }, 'allowedMccs.0'],
    ['an empty allow list', { allowedMccs: [] }, 'allowedMccs'],
    ['201 MCCs', { blockedMccs: Array.from({ length: 201 }, (_, i) => String(1000 + i)) }, 'blockedMccs'],
    ['a repeated MCC', { blockedMccs: ['7995', '7995'] }, 'blockedMccs'],
    ['a country that does not exist', { blockedCountries: ['XX'] }, 'blockedCountries.0'],
    ['a lower-case country', { allowedCountries: ['de'] }, 'allowedCountries.0'],
    ['251 countries', { blockedCountries: Array.from({ length: 251 }, () => 'DE') }, 'blockedCountries'],
    ['an empty allow list of wallets', { allowedWalletProviders: [] }, 'allowedWalletProviders'],
    ['an unknown wallet', { blockedWalletProviders: ['paypal'] }, 'blockedWalletProviders.0'],
    ['a repeated wallet', { allowedWalletProviders: ['apple_pay', 'apple_pay'] }, 'allowedWalletProviders'],
    ['an unknown field', { maxAmount: 5 }, 'maxAmount'],
    ['an unknown field in a rule', { velocity: [{ window: '1h', maxCount: 1, per: 'card' }] }, 'velocity.0.per'],
  ];
  for (const [description, body, field] of invalid) {
    it(`refuses ${description}, naming ${field}`, function () {
      expect(validate(body)).to.equal(false);
      expect(invalidParamsOf(validate.errors).map((p) => p.name)).to.include(field);
    });
  }

  it('counts decimals as the JSON wrote them (decimalsOf)', function () {
    const table: [number, number][] = [[1, 0], [19.99, 2], [0.07, 2], [1.15, 2], [1.005, 3], [1e-7, 7], [1e21, 0], [-2.5, 1], [123456789.12, 2]];
    for (const [value, decimals] of table) expect(decimalsOf(value), String(value)).to.equal(decimals);
  });
});

describe('unit: authorizations/spend-controls storage and velocity, on real PostgreSQL', function () {
  this.timeout(30_000);
  let services: InProcessServices;
  let partnerId: string;
  let otherPartnerId: string;
  let tenantId: string;
  const HOUR = 3600_000;
  const NOW = new Date();

  const newCard = async (partner = partnerId, tenant = tenantId): Promise<string> => {
    const cardKey = `CKSC${crypto.randomBytes(7).toString('hex').toUpperCase()}`;
    await services.db.query(
      `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, tenant_id, card_mask, type, status, status_code, currency, product_code, exp_date)
       VALUES ($1, $2, 'b2b', $3, $3, '5355 70** **** 0001', 'virtual', 'ACTIVE', '00', 'EUR', 'P-STD', '09/2030')`,
      [cardKey, partner, tenant]
    );
    return cardKey;
  };
  /** A row of card_transactions as the projection writes it: `steps` are [kind, amount, hours ago]. */
  const transaction = async (
    cardKey: string,
    options: { type?: string; status: string; amount: number; hoursAgo: number; steps?: [string, number][]; partner?: string; settled?: number }
  ): Promise<string> => {
    const id = crypto.randomBytes(12).toString('hex');
    const at = new Date(NOW.getTime() - options.hoursAgo * HOUR);
    const steps = options.steps ?? [['authorization', options.amount]];
    const history = steps.map(([kind, amount], i) => ({ kind, amount, at: new Date(at.getTime() + i * 1000).toISOString() }));
    await services.db.query(
      `INSERT INTO card_transactions (id, partner_id, card_key, amount, currency, type, status, merchant, settled_amount, history, version, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'EUR', $5, $6, '{"name":"Shop","mcc":"5411","city":"Berlin","country":"DE"}', $7, $8, $9, $10, $10)`,
      [id, options.partner ?? partnerId, cardKey, options.amount, options.type ?? 'PURCHASE', options.status, options.settled ?? null, JSON.stringify(history), history.length, at.toISOString()]
    );
    return id;
  };
  /** The controls that apply to a card, read as the authorization decision's claim reads them (applicableControlsColumn). */
  const applicable = async (cardKey: string) =>
    applicableControlsOf((await services.db.query(`SELECT ${applicableControlsColumn('c')} AS controls FROM cards c WHERE c.card_key = $1`, [cardKey])).rows[0].controls);
  /** What `authorization_velocity_gate` (migration 021, the decision's recording statement) answers for the same purchase, with velocityGate's limits. */
  const gated = async (controls: ApplicableSpendControls, cardKey: string, amount: number) => {
    const gate = velocityGate(controls, { partnerId, cardKey, amount, at: NOW });
    const row = (
      await services.db.query<{ passed: boolean; counts: string[]; amounts: string[] }>(
        'SELECT passed, counts::text[] AS counts, amounts::text[] AS amounts FROM authorization_velocity_gate($1, 5000, $2, $1, $3, $4::integer[], $5::bigint[], $6::numeric[])',
        [cardKey, partnerId, NOW.toISOString(), gate.windows, gate.countLimits, gate.amountLimits]
      )
    ).rows[0];
    const refusal = gate.refusal(row.counts, row.amounts);
    // The gate passes exactly when no rule refuses on its counts.
    expect(row.passed, `the gate passed ${row.passed}, the rules on its counts ${JSON.stringify(refusal)}`).to.equal(refusal === undefined);
    return row.passed ? undefined : refusal;
  };
  /** The pre-check's answer (checkVelocity), checked against the gate's for the same purchase. */
  const velocity = async (controls: ApplicableSpendControls, cardKey: string, amount: number) => {
    const checked = await checkVelocity(services.db, controls, { partnerId, cardKey, amount, at: NOW });
    expect(await gated(controls, cardKey, amount), 'the recording statement\'s gate').to.deep.equal(checked);
    return checked;
  };
  const cardRule = (rule: Record<string, unknown>): ApplicableSpendControls => ({ partner: {}, card: { velocity: [rule as never] } });

  before(async function () {
    services = await openServices();
    const create = (name: string) => services.partners.create({ name, issuer: `https://${name}.example`, publicKey: makeKeyPair().publicPem });
    partnerId = (await create('spend-controls-a'))._id;
    otherPartnerId = (await create('spend-controls-b'))._id;
    tenantId = (await services.partners.addTenant(partnerId, 'Fleet'))._id;
  });
  after(async function () {
    await services?.close();
  });

  describe('storage', function () {
    it('answers {} for nothing set, stores each scope apart, and {} clears one', async function () {
      const cardKey = await newCard();
      expect(await readSpendControls(services.db, partnerId, null)).to.deep.equal({});
      expect(await applicable(cardKey)).to.deep.equal({ partner: {}, card: {} });

      const partnerDefault: SpendControls = { velocity: [{ window: '24h', maxAmount: 300, maxCount: 5 }], blockedMccs: ['7995'] };
      const stored = await services.db.transaction((tx) => saveSpendControls(tx, partnerId, null, partnerDefault));
      expect(Object.keys(stored), 'a fixed field order').to.deep.equal(['blockedMccs', 'velocity']);
      expect(stored.velocity).to.deep.equal([{ window: '24h', maxCount: 5, maxAmount: 300 }]);
      await services.db.transaction((tx) => saveSpendControls(tx, partnerId, cardKey, { maxAmountPerTransaction: 25.5 }));
      expect(await applicable(cardKey)).to.deep.equal({ partner: stored, card: { maxAmountPerTransaction: 25.5 } });
      expect(await readSpendControls(services.db, partnerId, cardKey)).to.deep.equal({ maxAmountPerTransaction: 25.5 });
      // Another partner's default never applies to this partner's card.
      await services.db.transaction((tx) => saveSpendControls(tx, otherPartnerId, null, { blockedMccs: ['5411'] }));
      expect(await applicable(cardKey), "another partner's default").to.deep.equal({ partner: stored, card: { maxAmountPerTransaction: 25.5 } });
      await services.db.transaction((tx) => saveSpendControls(tx, otherPartnerId, null, {}));

      // PUT replaces the whole object.
      await services.db.transaction((tx) => saveSpendControls(tx, partnerId, null, { allowedCountries: ['DE'] }));
      expect(await readSpendControls(services.db, partnerId, null)).to.deep.equal({ allowedCountries: ['DE'] });
      await services.db.transaction((tx) => saveSpendControls(tx, partnerId, null, {}));
      expect(await readSpendControls(services.db, partnerId, null)).to.deep.equal({});
      expect((await services.db.query('SELECT count(*)::int AS n FROM spend_controls WHERE partner_id = $1 AND card_key IS NULL', [partnerId])).rows[0].n, 'cleared: no row').to.equal(0);
      expect(await readSpendControls(services.db, partnerId, cardKey), "the card's own stay").to.deep.equal({ maxAmountPerTransaction: 25.5 });
      await services.db.transaction((tx) => saveSpendControls(tx, partnerId, cardKey, {}));
      expect(await applicable(cardKey)).to.deep.equal({ partner: {}, card: {} });
    });

    it('keeps one row per scope under concurrent writes', async function () {
      const cardKey = await newCard();
      await Promise.all(Array.from({ length: 6 }, (_, i) => services.db.transaction((tx) => saveSpendControls(tx, partnerId, i % 2 ? cardKey : null, { maxAmountPerTransaction: i + 1 }))));
      const rows = await services.db.query('SELECT card_key FROM spend_controls WHERE partner_id = $1 AND (card_key IS NULL OR card_key = $2)', [partnerId, cardKey]);
      expect(rows.rowCount).to.equal(2);
      await services.db.transaction((tx) => saveSpendControls(tx, partnerId, null, {}));
    });

    it("follows its card to a new cardKey (replacement), and goes with the card", async function () {
      const cardKey = await newCard();
      await services.db.transaction((tx) => saveSpendControls(tx, partnerId, cardKey, { blockedCountries: ['RU'] }));
      const newKey = `${cardKey}R`;
      await services.db.query('UPDATE cards SET card_key = $2 WHERE card_key = $1', [cardKey, newKey]);
      expect(await readSpendControls(services.db, partnerId, newKey)).to.deep.equal({ blockedCountries: ['RU'] });
      expect(await readSpendControls(services.db, partnerId, cardKey)).to.deep.equal({});
      await services.db.query('DELETE FROM cards WHERE card_key = $1', [newKey]);
      expect((await services.db.query('SELECT count(*)::int AS n FROM spend_controls WHERE card_key = $1', [newKey])).rows[0].n).to.equal(0);
    });
  });

  describe('checkVelocity', function () {
    it('passes without a velocity rule, counting nothing (the counts read are zeros)', async function () {
      const cardKey = await newCard();
      await transaction(cardKey, { status: 'PENDING', amount: 30, hoursAgo: 0.5 });
      const controls: ApplicableSpendControls = { partner: { maxAmountPerTransaction: 5 }, card: { blockedMccs: ['7995'] } };
      const { rows } = await services.db.query<{ velocity: Record<string, unknown> }>(COUNTS_SQL, countsParams(controls, { partnerId, cardKey, amount: 1000, at: NOW }));
      expect(rows[0]!.velocity).to.deep.equal({ c_1h: 0, a_1h: '0', c_24h: 0, a_24h: '0', c_7d: 0, a_7d: '0', c_30d: 0, a_30d: '0' });
      expect(await velocity(controls, cardKey, 1000)).to.equal(undefined);
    });

    it('counts approved authorizations in the window: maxCount 2 declines the third', async function () {
      const cardKey = await newCard();
      const rule = cardRule({ window: '1h', maxCount: 2 });
      expect(await velocity(rule, cardKey, 10)).to.equal(undefined);
      await transaction(cardKey, { status: 'PENDING', amount: 10, hoursAgo: 0.5 });
      expect(await velocity(rule, cardKey, 10)).to.equal(undefined);
      await transaction(cardKey, { status: 'PENDING', amount: 10, hoursAgo: 0.1 });
      expect(await velocity(rule, cardKey, 10)).to.deep.equal({ declineReason: 'velocity_exceeded', rule: 'card.velocity[0].maxCount' });
    });

    it('rolls: an authorization older than the window no longer counts', async function () {
      const cardKey = await newCard();
      await transaction(cardKey, { status: 'PENDING', amount: 10, hoursAgo: 1.01 });
      await transaction(cardKey, { status: 'SETTLED', amount: 10, hoursAgo: 23, steps: [['authorization', 10], ['clearing', 10]], settled: 10 });
      expect(await velocity(cardRule({ window: '1h', maxCount: 1 }), cardKey, 1)).to.equal(undefined);
      expect(await velocity(cardRule({ window: '24h', maxCount: 2 }), cardKey, 1)).to.deep.equal({ declineReason: 'velocity_exceeded', rule: 'card.velocity[0].maxCount' });
      expect(await velocity(cardRule({ window: '24h', maxCount: 3 }), cardKey, 1)).to.equal(undefined);
      await transaction(cardKey, { status: 'PENDING', amount: 10, hoursAgo: 24 * 6.9 });
      await transaction(cardKey, { status: 'PENDING', amount: 10, hoursAgo: 24 * 29.9 });
      await transaction(cardKey, { status: 'PENDING', amount: 10, hoursAgo: 24 * 30.1 });
      expect(await velocity(cardRule({ window: '7d', maxCount: 4 }), cardKey, 1)).to.equal(undefined);
      expect(await velocity(cardRule({ window: '7d', maxCount: 3 }), cardKey, 1)).to.not.equal(undefined);
      expect(await velocity(cardRule({ window: '30d', maxCount: 5 }), cardKey, 1)).to.equal(undefined);
      expect(await velocity(cardRule({ window: '30d', maxCount: 4 }), cardKey, 1)).to.not.equal(undefined);
    });

    it('gives back a reversal and an expiry, counts the rest of a partial reversal and a settled amount', async function () {
      const cardKey = await newCard();
      await transaction(cardKey, { status: 'REVERSED', amount: 0, hoursAgo: 0.2, steps: [['authorization', 100], ['reversal', 100]] });
      await transaction(cardKey, { status: 'EXPIRED', amount: 100, hoursAgo: 0.2, steps: [['authorization', 100], ['expiry', 100]] });
      await transaction(cardKey, { status: 'PENDING', amount: 30, hoursAgo: 0.2, steps: [['authorization', 100], ['reversal', 70]] });
      await transaction(cardKey, { status: 'SETTLED', amount: 40, hoursAgo: 0.2, steps: [['authorization', 40], ['clearing', 40]], settled: 40 });
      // Never counted: a decline, a force-posted clearing, a refund, another card's and another partner's authorizations.
      await transaction(cardKey, { status: 'DECLINED', amount: 500, hoursAgo: 0.2, steps: [['decline', 500]] });
      await transaction(cardKey, { status: 'SETTLED', amount: 500, hoursAgo: 0.2, steps: [['clearing', 500]], settled: 500 });
      await transaction(cardKey, { type: 'REFUND', status: 'SETTLED', amount: 20, hoursAgo: 0.2, steps: [['refund', 20]], settled: 20 });
      await transaction(await newCard(), { status: 'PENDING', amount: 500, hoursAgo: 0.2 });
      await transaction(cardKey, { type: 'WITHDRAWAL', status: 'PENDING', amount: 5, hoursAgo: 0.2 });
      // Counted: 30 + 40 + 5 = 75, in 3 authorizations.
      expect(await velocity(cardRule({ window: '1h', maxCount: 4 }), cardKey, 1)).to.equal(undefined);
      expect(await velocity(cardRule({ window: '1h', maxCount: 3 }), cardKey, 1)).to.deep.equal({ declineReason: 'velocity_exceeded', rule: 'card.velocity[0].maxCount' });
      expect(await velocity(cardRule({ window: '1h', maxAmount: 100 }), cardKey, 25), 'exactly the maximum').to.equal(undefined);
      expect(await velocity(cardRule({ window: '1h', maxAmount: 100 }), cardKey, 25.01)).to.deep.equal({ declineReason: 'velocity_exceeded', rule: 'card.velocity[0].maxAmount' });
      const { rows } = await services.db.query<{ velocity: Record<string, unknown> }>(COUNTS_SQL, countsParams(cardRule({ window: '1h', maxCount: 4 }), { partnerId, cardKey, amount: 1, at: NOW }));
      expect({ c_1h: rows[0]!.velocity.c_1h, a_1h: rows[0]!.velocity.a_1h }).to.deep.equal({ c_1h: 3, a_1h: '75.0000' });
    });

    it("checks the partner's rules before the card's, each in order, maxCount before maxAmount", async function () {
      const cardKey = await newCard();
      await transaction(cardKey, { status: 'PENDING', amount: 60, hoursAgo: 2 });
      const controls: ApplicableSpendControls = {
        partner: { velocity: [{ window: '1h', maxCount: 5 }, { window: '24h', maxCount: 1, maxAmount: 50 }] },
        card: { velocity: [{ window: '24h', maxCount: 1 }] },
      };
      expect(await velocity(controls, cardKey, 1)).to.deep.equal({ declineReason: 'velocity_exceeded', rule: 'partner.velocity[1].maxCount' });
      controls.partner.velocity![1] = { window: '24h', maxAmount: 50 };
      expect(await velocity(controls, cardKey, 1)).to.deep.equal({ declineReason: 'velocity_exceeded', rule: 'partner.velocity[1].maxAmount' });
      controls.partner.velocity!.pop();
      expect(await velocity(controls, cardKey, 1)).to.deep.equal({ declineReason: 'velocity_exceeded', rule: 'card.velocity[0].maxCount' });
    });

    it('counts from the velocity ledger (migration 023), a few lookups of its key, never a scan of card_transactions', async function () {
      const cardKey = await newCard();
      await transaction(cardKey, { status: 'PENDING', amount: 10, hoursAgo: 0.5 });
      const plan = await services.db.transaction(async (tx) => {
        await tx.query('SET LOCAL enable_seqscan = off');
        const controls: ApplicableSpendControls = { partner: {}, card: { velocity: [{ window: '1h', maxCount: 1 }, { window: '30d', maxCount: 1 }] } };
        const explained = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${COUNTS_SQL}`, countsParams(controls, { partnerId, cardKey, amount: 1, at: NOW }));
        return JSON.stringify(explained.rows[0]['QUERY PLAN']);
      });
      expect(plan).to.include('card_velocity_ledger_pkey');
      expect(plan).to.not.include('card_transactions');
      // The index it replaced is gone (nothing read it any more, and every counted row's insert paid for it).
      expect((await services.db.query(`SELECT to_regclass('card_transactions_velocity_idx') AS idx`)).rows[0].idx).to.equal(null);
    });

    it('approves exactly maxCount of concurrent decisions on one card under the per-card advisory lock', async function () {
      const cardKey = await newCard();
      const controls = cardRule({ window: '1h', maxCount: 2 });
      const decide = (i: number) =>
        services.db.transaction(async (tx) => {
          await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('auth:' || $1, 0))", [cardKey]);
          const declined = await checkVelocity(tx, controls, { partnerId, cardKey, amount: 1, at: new Date() });
          if (declined) return false;
          await tx.query(
            `INSERT INTO card_transactions (id, partner_id, card_key, amount, currency, type, status, merchant, history, version, created_at, updated_at)
             VALUES ($1, $2, $3, 1, 'EUR', 'PURCHASE', 'PENDING', '{}', $4, 1, now(), now())`,
            [newObjectId() + i, partnerId, cardKey, JSON.stringify([{ kind: 'authorization', amount: 1, at: new Date().toISOString() }])]
          );
          return true;
        });
      const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => decide(i)));
      expect(outcomes.filter(Boolean)).to.have.length(2);
    });

    it('refuses to gate at another isolation level than READ COMMITTED, where its count would reuse the statement\'s snapshot', async function () {
      const cardKey = await newCard();
      const gate = velocityGate(cardRule({ window: '1h', maxCount: 2 }), { partnerId, cardKey, amount: 1, at: new Date() });
      for (const level of ['REPEATABLE READ', 'SERIALIZABLE']) {
        const refused = await services.db
          .transaction(async (tx) => {
            await tx.query(`SET TRANSACTION ISOLATION LEVEL ${level}`);
            await tx.query('SELECT passed FROM authorization_velocity_gate($1, 5000, $2, $1, now(), $3::integer[], $4::bigint[], $5::numeric[])', [cardKey, partnerId, gate.windows, gate.countLimits, gate.amountLimits]);
          })
          .then(
            () => undefined,
            (err: { code?: string }) => err.code
          );
        expect(refused, level).to.equal('PGW02');
      }
    });

    it('approves exactly maxCount of concurrent single statements that gate (migration 021) and then write, as the recording statement does', async function () {
      const cardKey = await newCard();
      const gate = velocityGate(cardRule({ window: '1h', maxCount: 2 }), { partnerId, cardKey, amount: 1, at: new Date() });
      // Each statement's own snapshot is taken before it waits for the card's lock: only the gate's
      // fresh snapshot after the lock sees what the previous holder committed.
      const decide = async (i: number) =>
        Number(
          (
            await services.db.query<{ n: string }>(
              `WITH gate AS MATERIALIZED (SELECT passed FROM authorization_velocity_gate($3, 5000, $2, $3, now(), $5::integer[], $6::bigint[], $7::numeric[])),
               ins AS (
                 INSERT INTO card_transactions (id, partner_id, card_key, amount, currency, type, status, merchant, history, version, created_at, updated_at)
                 SELECT $1, $2, $3, 1, 'EUR', 'PURCHASE', 'PENDING', '{}', $4, 1, now(), now() WHERE EXISTS (SELECT 1 FROM gate WHERE passed) RETURNING 1
               ) SELECT count(*) AS n FROM ins`,
              [newObjectId() + i, partnerId, cardKey, JSON.stringify([{ kind: 'authorization', amount: 1, at: new Date().toISOString() }]), gate.windows, gate.countLimits, gate.amountLimits]
            )
          ).rows[0].n
        ) === 1;
      const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => decide(i)));
      expect(outcomes.filter(Boolean)).to.have.length(2);
    });
  });
});

/** A seeded pseudo-random generator in [0, 1) (mulberry32): a failing run is replayed with its seed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The velocity counts as migration 016's index and spend-controls.ts counted them before the ledger
 * (migration 023): a scan of the card's rows of card_transactions over the longest window the rules
 * name. The reference the ledger's counts must equal.
 */
function scanCountsColumn(controls: string, card: string, at: string): string {
  const windows = Object.keys(VELOCITY_WINDOWS) as VelocityWindow[];
  const seconds = `CASE r.value->>'window' ${windows.map((w) => `WHEN '${w}' THEN ${VELOCITY_WINDOWS[w]}`).join(' ')} END`;
  const fields = windows.flatMap((w) => {
    const since = `t.created_at > ${at}::timestamptz - interval '${VELOCITY_WINDOWS[w]} seconds'`;
    return [`'c_${w}', count(*) FILTER (WHERE ${since})`, `'a_${w}', coalesce(sum(t.amount) FILTER (WHERE ${since}), 0)::text`];
  });
  return `(SELECT jsonb_build_object(${fields.join(', ')})
             FROM (SELECT max(${seconds}) AS longest FROM jsonb_array_elements(coalesce(${controls}, '[]'::jsonb)) AS sc, jsonb_array_elements(coalesce(sc.value->'controls'->'velocity', '[]'::jsonb)) AS r) AS w
             JOIN card_transactions t ON t.partner_id = ${card}.partner_id AND t.card_key = ${card}.card_key AND t.created_at > ${at}::timestamptz - make_interval(secs => w.longest)
              AND t.status IN ('PENDING', 'SETTLED') AND t.type IN ('PURCHASE', 'WITHDRAWAL') AND (t.history -> 0 ->> 'kind') = 'authorization'
            WHERE w.longest IS NOT NULL)`;
}

describe('unit: authorizations/spend-controls velocity ledger (migration 023): the counts of a scan of card_transactions', function () {
  this.timeout(120_000);
  // PGlite is one session: no concurrent transactions, and the run's database is shared by every
  // file (no database of its own: no TRUNCATE, no migration run again).
  const embedded = process.env.TEST_DB === 'embedded';
  const log = createLogger({ level: 'silent' });
  const DAY = 86_400_000;
  const SEED = Number(process.env.VELOCITY_LEDGER_SEED ?? 20_230_023);
  const suffix = crypto.randomBytes(4).toString('hex').toUpperCase();
  const partners = [crypto.randomBytes(12).toString('hex'), crypto.randomBytes(12).toString('hex')];
  let own: RunDatabase | undefined;
  let db: Database;
  let before023: string | undefined;

  /** The rows the randomized writes pick from (ids in card_transactions). */
  interface Row {
    id: string;
    partner: string;
    card: string;
    createdAt: Date;
  }
  const STATUSES = ['PENDING', 'SETTLED', 'DECLINED', 'REVERSED', 'EXPIRED'];
  const TYPES = ['PURCHASE', 'PURCHASE', 'PURCHASE', 'WITHDRAWAL', 'REFUND'];
  const KINDS = ['authorization', 'authorization', 'authorization', 'authorization', 'decline', 'clearing', 'refund'];
  const pick = <T>(rand: () => number, values: readonly T[]): T => values[Math.floor(rand() * values.length)]!;
  const amountOf = (rand: () => number) => (rand() < 0.1 ? '0.0000' : (Math.floor(rand() * 5_000_000) / 10_000).toFixed(4));

  async function insertRow(q: Queryable, row: Row, o: { amount: string; type: string; status: string; kind: string }): Promise<void> {
    const history = [{ kind: o.kind, amount: Number(o.amount), at: row.createdAt.toISOString() }];
    await q.query(
      `INSERT INTO card_transactions (id, partner_id, card_key, amount, currency, type, status, merchant, history, version, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'EUR', $5, $6, '{}', $7, 1, $8, $8)`,
      [row.id, row.partner, row.card, o.amount, o.type, o.status, JSON.stringify(history), row.createdAt.toISOString()]
    );
  }
  /**
   * A new row, created within the last `span` (35 days by default: some beyond the ledger's reach),
   * many near the 30-day window's start and the ledger's 32-day reach, some in the last hour or the
   * next three, some at a time another row has.
   */
  function newRow(rand: () => number, cards: [string, string][], rows: Row[], span = 35 * DAY): Row {
    const [partner, card] = pick(rand, cards);
    const draw = rand();
    const ago =
      draw < 0.1 && rows.length > 0
        ? Date.now() - pick(rand, rows).createdAt.getTime()
        : draw < 0.2
          ? -rand() * 3 * 3_600_000
          : draw < 0.35
            ? rand() * 3_600_000
            : draw < 0.5
              ? Math.min(span, 28 * DAY + rand() * 5 * DAY)
              : rand() * span;
    return { id: `L${suffix}${crypto.randomBytes(6).toString('hex')}`, partner, card, createdAt: new Date(Date.now() - ago) };
  }
  /**
   * Time passes for one card: its rows and its ledger entries all move `days` back together (the
   * triggers off, as if written that long ago), so that the next entry added to the card prunes
   * the entries that left the ledger's reach.
   */
  async function age(card: [string, string], days: number, rows: Row[]): Promise<void> {
    await db.transaction(async (tx) => {
      await tx.query('SET LOCAL session_replication_role = replica');
      await tx.query(`UPDATE card_transactions SET created_at = created_at - make_interval(days => $3) WHERE partner_id = $1 AND card_key = $2`, [...card, days]);
      await tx.query(`UPDATE card_velocity_ledger SET created_at = created_at - make_interval(days => $3) WHERE partner_id = $1 AND card_key = $2`, [...card, days]);
    });
    for (const row of rows) if (row.partner === card[0] && row.card === card[1]) row.createdAt = new Date(row.createdAt.getTime() - days * DAY);
  }
  const randomFacts = (rand: () => number) => ({ amount: amountOf(rand), type: pick(rand, TYPES), status: pick(rand, STATUSES), kind: pick(rand, KINDS) });

  /** One random change of an existing row; `rows` follows deletes and moves. */
  async function changeRow(q: Queryable, rand: () => number, row: Row, rows: Row[], cards: [string, string][]): Promise<void> {
    const draw = rand();
    if (draw < 0.3) await q.query('UPDATE card_transactions SET status = $2 WHERE id = $1', [row.id, pick(rand, STATUSES)]);
    else if (draw < 0.5) await q.query('UPDATE card_transactions SET amount = round(amount * $2::numeric, 4) WHERE id = $1', [row.id, rand() < 0.2 ? 0 : rand().toFixed(3)]);
    else if (draw < 0.6) await q.query('UPDATE card_transactions SET amount = $2 WHERE id = $1', [row.id, amountOf(rand)]);
    else if (draw < 0.67) await q.query(`UPDATE card_transactions SET history = jsonb_set(history, '{0,kind}', to_jsonb($2::text)) WHERE id = $1`, [row.id, pick(rand, KINDS)]);
    else if (draw < 0.72) await q.query('UPDATE card_transactions SET type = $2 WHERE id = $1', [row.id, pick(rand, TYPES)]);
    else if (draw < 0.78) {
      row.createdAt = new Date(Date.now() - rand() * 35 * DAY);
      await q.query('UPDATE card_transactions SET created_at = $2 WHERE id = $1', [row.id, row.createdAt.toISOString()]);
    } else if (draw < 0.84) {
      // Another card, of this partner or the other (never done by the gateway, kept by the ledger all the same).
      [row.partner, row.card] = pick(rand, cards);
      await q.query('UPDATE card_transactions SET partner_id = $2, card_key = $3 WHERE id = $1', [row.id, row.partner, row.card]);
    } else if (draw < 0.9) {
      // A clearing that changes nothing counted (no entry written: the trigger's WHEN).
      await q.query(`UPDATE card_transactions SET status = CASE status WHEN 'PENDING' THEN 'SETTLED' ELSE status END, version = version + 1 WHERE id = $1`, [row.id]);
    } else {
      await q.query('DELETE FROM card_transactions WHERE id = $1', [row.id]);
      const at = rows.indexOf(row);
      if (at >= 0) rows.splice(at, 1);
    }
  }

  const COUNTED = `status IN ('PENDING', 'SETTLED') AND type IN ('PURCHASE', 'WITHDRAWAL') AND (history -> 0 ->> 'kind') = 'authorization'`;
  /** The scan, per window ($4: seconds): what the count was before the ledger. */
  const SCAN = `SELECT w.i::int AS i, count(t.id)::text AS n, coalesce(sum(t.amount), 0)::text AS amount
                  FROM unnest($4::integer[]) WITH ORDINALITY AS w (secs, i)
                  LEFT JOIN card_transactions t ON t.partner_id = $1 AND t.card_key = $2 AND t.created_at > $3::timestamptz - make_interval(secs => w.secs)
                   AND t.status IN ('PENDING', 'SETTLED') AND t.type IN ('PURCHASE', 'WITHDRAWAL') AND (t.history -> 0 ->> 'kind') = 'authorization'
                 GROUP BY w.i ORDER BY w.i`;
  const LEDGER = 'SELECT i::int AS i, n::text AS n, amount::text AS amount FROM card_velocity_counts($1, $2, $3, $4::integer[]) ORDER BY i';

  /**
   * What the ledger holds for a card against what it should: the counted rows created within its
   * reach (32 days) that have no entry (`missing`) and the entries of that span without such a row
   * (`extra`), and the entries whose sums do not continue their predecessor's by their own
   * contribution (`broken`).
   */
  async function ledgerFaults(partner: string, card: string): Promise<{ missing: number; extra: number; broken: number; entries: number }> {
    const row = (
      await db.query<{ missing: number; extra: number; broken: number; entries: number }>(
        `WITH counted AS (
           SELECT created_at, id AS transaction_id, amount FROM card_transactions
            WHERE partner_id = $1 AND card_key = $2 AND created_at >= now() - interval '32 days' AND ${COUNTED}
         ), entries AS (
           SELECT created_at, transaction_id, amount, cum_count - lag(cum_count) OVER o AS dc, cum_amount - lag(cum_amount) OVER o AS da
             FROM card_velocity_ledger WHERE partner_id = $1 AND card_key = $2 WINDOW o AS (ORDER BY created_at, transaction_id)
         )
         SELECT (SELECT count(*) FROM (SELECT * FROM counted EXCEPT SELECT created_at, transaction_id, amount FROM entries) AS x)::int AS missing,
                (SELECT count(*) FROM (SELECT created_at, transaction_id, amount FROM entries WHERE created_at >= now() - interval '32 days' EXCEPT SELECT * FROM counted) AS x)::int AS extra,
                (SELECT count(*) FROM entries WHERE dc IS NOT NULL AND (dc <> 1 OR da <> amount))::int AS broken,
                (SELECT count(*) FROM entries)::int AS entries`,
        [partner, card]
      )
    ).rows[0];
    return row;
  }

  /**
   * One random check: for a card, a time `at` (within the last 36 hours or the next 3, or a row's
   * time plus a window, so that the window starts exactly at that row, which is then not counted)
   * and windows, the ledger's counts (card_velocity_counts), velocityCountsColumn's and the gate's
   * equal the scan's.
   */
  async function expectSameCounts(rand: () => number, cards: [string, string][], rows: Row[], label: string): Promise<void> {
    const [partner, card] = pick(rand, cards);
    const names = (Object.keys(VELOCITY_WINDOWS) as VelocityWindow[]).filter(() => rand() < 0.6);
    const windows = [...names.map((w) => VELOCITY_WINDOWS[w]), ...(rand() < 0.5 ? [1 + Math.floor(rand() * 30 * 86_400)] : [])];
    let at = new Date(Date.now() - rand() * 1.5 * DAY + rand() * 3 * 3_600_000);
    if (rand() < 0.3) {
      // A window that starts exactly at a counted row's time: that row is not counted (the count is of rows created after the start).
      const counted = (
        await db.query<{ created_at: Date }>(`SELECT created_at FROM card_transactions WHERE partner_id = $1 AND card_key = $2 AND created_at > now() - interval '31 days' AND ${COUNTED} ORDER BY created_at, id`, [partner, card])
      ).rows;
      if (counted.length > 0) {
        const start = pick(rand, counted).created_at.getTime();
        const fits = windows.filter((w) => start + w * 1000 > Date.now() - 1.5 * DAY && start + w * 1000 < Date.now() + DAY);
        const secs = fits.length > 0 ? pick(rand, fits) : Math.ceil((Date.now() - start) / 1000);
        if (!windows.includes(secs)) windows.push(secs);
        at = new Date(start + secs * 1000);
      }
    }
    const context = `${label}, seed ${SEED}: card ${card} of ${partner}, at ${at.toISOString()}, windows ${windows.join(',')}`;
    const ledger = (await db.query<{ i: number; n: string; amount: string }>(LEDGER, [partner, card, at.toISOString(), windows])).rows;
    const scanned = (await db.query<{ i: number; n: string; amount: string }>(SCAN, [partner, card, at.toISOString(), windows])).rows;
    expect(scanned.map((r) => r.i), context).to.deep.equal(windows.map((_, i) => i + 1));
    expect(ledger, context).to.deep.equal(scanned);
    // The claim's column for rules on these windows (or none), against the scan's column it replaced.
    const rules = names.map((window) => ({ window, maxCount: 1 }));
    const split = Math.floor(rand() * (rules.length + 1));
    const controls: ApplicableSpendControls = { partner: rules.length ? { velocity: rules.slice(0, split) } : {}, card: { velocity: rules.slice(split) } };
    const params = [JSON.stringify([{ card_key: null, controls: controls.partner }, { card_key: card, controls: controls.card }]), partner, card, at.toISOString()];
    const column = (sql: string) => db.query<{ v: unknown }>(`SELECT ${sql} AS v FROM (SELECT $2::text AS partner_id, $3::text AS card_key) AS c`, params);
    expect((await column(velocityCountsColumn('$1::jsonb', 'c', '$4'))).rows[0].v, `${context}: velocityCountsColumn`).to.deep.equal(
      (await column(scanCountsColumn('$1::jsonb', 'c', '$4'))).rows[0].v
    );
    // The gate of the recording statement, its counts against the scan's.
    const gate = velocityGate(controls, { partnerId: partner, cardKey: card, amount: 1, at });
    const gated = (
      await db.query<{ counts: string[]; amounts: string[] }>(
        'SELECT counts::text[] AS counts, amounts::text[] AS amounts FROM authorization_velocity_gate($1, 5000, $2, $1, $3, $4::integer[], $5::bigint[], $6::numeric[])',
        [card, partner, at.toISOString(), gate.windows, gate.countLimits, gate.amountLimits]
      )
    ).rows[0];
    const scans = gate.windows.map((secs) => scanned[windows.indexOf(secs)]!);
    expect({ counts: gated.counts, amounts: gated.amounts }, `${context}: the gate`).to.deep.equal({ counts: scans.map((r) => r.n), amounts: scans.map((r) => r.amount) });
  }

  before(async function () {
    own = embedded ? undefined : await createOwnDatabase();
    db = new Database(own ? own.url : runDatabaseUrl(), { max: embedded ? 2 : 20, log });
    if (own) {
      // The database as it was before migration 023 (the migration's own test applies it).
      before023 = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-before-023-'));
      for (const m of readMigrations().filter((m) => m.version < '023')) fs.writeFileSync(path.join(before023, `${m.version}_${m.name}.sql`), m.sql);
      await migrate(db, log, before023);
    } else {
      await migrate(db, log);
    }
    await db.query(`INSERT INTO partners (id, name, issuer) SELECT id, 'ledger-' || id, 'https://ledger-' || id || '.example' FROM unnest($1::text[]) AS id`, [partners]);
  });
  after(async function () {
    await db?.close();
    await own?.drop();
    if (before023) fs.rmSync(before023, { recursive: true, force: true });
  });

  it('backfills the counted rows of the last 32 days that existed before it, drops the index it replaces, and keeps them from then on', async function () {
    if (embedded) this.skip(); // the run's shared database is migrated already
    const rand = seededRandom(SEED);
    const cards: [string, string][] = partners.flatMap((p) => [`CKMIG${suffix}A`, `CKMIG${suffix}B`].map((c) => [p, c] as [string, string]));
    const rows: Row[] = [];
    for (let i = 0; i < 300; i++) {
      const row = newRow(rand, cards, rows);
      // Half of them authorizations that count (then a random status change), the others of any kind.
      await insertRow(db, row, rand() < 0.5 ? { amount: amountOf(rand), type: 'PURCHASE', status: 'PENDING', kind: 'authorization' } : randomFacts(rand));
      rows.push(row);
      if (rand() < 0.2) await changeRow(db, rand, row, rows, cards);
    }
    expect(await migrate(db, log), '023 and the migrations after it').to.deep.equal(readMigrations().filter((m) => m.version >= '023').map((m) => m.version));
    for (const [partner, card] of cards) {
      const faults = await ledgerFaults(partner, card);
      expect(faults, `${card} of ${partner}`).to.include({ missing: 0, extra: 0, broken: 0 });
      expect(faults.entries, 'entries backfilled').to.be.greaterThan(15);
      // Nothing created before the ledger's reach.
      const old = await db.query(`SELECT 1 FROM card_velocity_ledger WHERE partner_id = $1 AND card_key = $2 AND created_at < now() - interval '32 days'`, [partner, card]);
      expect(old.rowCount, 'entries older than 32 days').to.equal(0);
    }
    for (let i = 0; i < 40; i++) await expectSameCounts(rand, cards, rows, `after the backfill, check ${i}`);
    expect((await db.query(`SELECT to_regclass('card_transactions_velocity_idx') AS idx`)).rows[0].idx).to.equal(null);
    // From the migration on, each write keeps the ledger.
    const row = { ...newRow(rand, cards, rows), createdAt: new Date(Date.now() - 60_000) };
    await insertRow(db, row, { amount: '12.3400', type: 'PURCHASE', status: 'PENDING', kind: 'authorization' });
    expect((await db.query('SELECT amount::text FROM card_velocity_ledger WHERE transaction_id = $1', [row.id])).rows).to.deep.equal([{ amount: '12.3400' }]);
  });

  it('counts what the scan counts after random writes (seeded): inserts out of order, status, amount, history, type, time and card changes, deletes, transactions of several writes, a truncate', async function () {
    await migrate(db, log);
    const rand = seededRandom(SEED + 1);
    const cards: [string, string][] = partners.flatMap((p) => [`CKRND${suffix}A`, `CKRND${suffix}B`, `CKRND${suffix}C`].map((c) => [p, c] as [string, string]));
    const rows: Row[] = [];
    const OPERATIONS = 300;
    let checks = 0;
    for (let op = 0; op < OPERATIONS; op++) {
      if (op === OPERATIONS / 2 && !embedded) {
        await db.query('TRUNCATE card_transactions CASCADE');
        expect((await db.query('SELECT count(*)::int AS n FROM card_velocity_ledger')).rows[0].n, 'the ledger truncated with its table').to.equal(0);
        rows.length = 0;
      }
      // One write on its own, or two to four in one transaction (on one row, some of them: the
      // deferred triggers fire in the writes' order at the commit).
      const writes = rand() < 0.2 ? 2 + Math.floor(rand() * 3) : 1;
      const inTransaction = <T>(work: (q: Queryable) => Promise<T>) => (writes === 1 ? work(db) : db.transaction(work));
      await inTransaction(async (tx) => {
        let last: Row | undefined;
        for (let w = 0; w < writes; w++) {
          if (rows.length < 10 || rand() < 0.45) {
            last = newRow(rand, cards, rows);
            await insertRow(tx, last, randomFacts(rand));
            rows.push(last);
          } else {
            const row = last && rows.includes(last) && rand() < 0.5 ? last : pick(rand, rows);
            await changeRow(tx, rand, row, rows, cards);
          }
        }
      });
      if (rand() < 0.03) {
        // Time passes for a card; then an authorization now (its entry prunes the entries out of
        // reach: the oldest left no longer starts the sums at 1) and one at the edge of the reach,
        // before every entry left (its sums are the next entry's less that entry's own).
        const card = pick(rand, cards);
        await age(card, 1 + Math.floor(rand() * 5), rows);
        for (const ago of [0, 31.9 * DAY]) {
          const row = { id: `L${suffix}${crypto.randomBytes(6).toString('hex')}`, partner: card[0], card: card[1], createdAt: new Date(Date.now() - ago) };
          await insertRow(db, row, { amount: amountOf(rand), type: 'PURCHASE', status: 'PENDING', kind: 'authorization' });
          rows.push(row);
        }
      }
      if (op % 25 === 24) {
        for (let i = 0; i < 3; i++) await expectSameCounts(rand, cards, rows, `after write ${op}, check ${checks++}`);
        for (const [partner, card] of cards) expect(await ledgerFaults(partner, card), `after write ${op}: ${card} of ${partner}`).to.include({ missing: 0, extra: 0, broken: 0 });
      }
    }
    for (let i = 0; i < 50; i++) await expectSameCounts(rand, cards, rows, `at the end, check ${checks++}`);
    for (const [partner, card] of cards) expect(await ledgerFaults(partner, card), `${card} of ${partner}`).to.include({ missing: 0, extra: 0, broken: 0 });
    expect(rows.length, 'rows written and kept').to.be.greaterThan(50);
  });

  it('keeps its sums under concurrent commits on one card (each transaction on its own connection, all committing at once)', async function () {
    if (embedded) this.skip();
    await migrate(db, log);
    const rand = seededRandom(SEED + 2);
    const cards: [string, string][] = [[partners[0]!, `CKCONC${suffix}A`], [partners[0]!, `CKCONC${suffix}B`]];
    const one: [string, string][] = [cards[0]!];
    const rows: Row[] = [];
    for (let i = 0; i < 40; i++) {
      const row = newRow(rand, one, rows, 3 * DAY);
      await insertRow(db, row, { amount: amountOf(rand), type: 'PURCHASE', status: 'PENDING', kind: 'authorization' });
      rows.push(row);
    }
    const TRANSACTIONS = 16;
    for (let round = 0; round < 5; round++) {
      // Each transaction writes a row of its own (a new one, out of order, or one no other takes),
      // then waits until every one has written: the commits, and their deferred triggers, race.
      const free = [...rows];
      let written = 0;
      let allWritten!: () => void;
      const barrier = new Promise<void>((resolve) => (allWritten = resolve));
      await Promise.all(
        Array.from({ length: TRANSACTIONS }, () =>
          db.transaction(async (tx) => {
            const draw = rand();
            if (draw < 0.4 || free.length === 0) {
              const row = newRow(rand, one, rows, 3 * DAY);
              rows.push(row);
              await insertRow(tx, row, { amount: amountOf(rand), type: 'PURCHASE', status: 'PENDING', kind: 'authorization' });
              if (draw < 0.15) await tx.query('UPDATE card_transactions SET amount = amount / 2 WHERE id = $1', [row.id]);
            } else {
              const row = free.splice(Math.floor(rand() * free.length), 1)[0]!;
              await changeRow(tx, rand, row, rows, draw < 0.8 ? one : cards);
            }
            if (++written === TRANSACTIONS) allWritten();
            await barrier;
          })
        )
      );
      for (const [partner, card] of cards) expect(await ledgerFaults(partner, card), `round ${round}: ${card}`).to.include({ missing: 0, extra: 0, broken: 0 });
    }
    expect((await ledgerFaults(cards[0]![0], cards[0]![1])).entries, 'entries').to.be.greaterThan(30);
    for (let i = 0; i < 20; i++) await expectSameCounts(rand, cards, rows, `after the concurrent commits, check ${i}`);
  });
});
