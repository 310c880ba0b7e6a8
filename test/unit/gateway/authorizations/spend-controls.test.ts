import crypto from 'node:crypto';
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
import type { Queryable } from '../../../../gateway/db/database';
import { newObjectId } from '../../../../gateway/ids';
import { spendControls as spendControlsSchema } from '../../../../gateway/schemas/spend-controls';
import { bodyAjv, decimalsOf, invalidParamsOf } from '../../../../gateway/validation/ajv';
import { openServices, type InProcessServices } from '../../../support/in-process';
import { makeKeyPair } from '../../../support/partners';

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

    it('counts on the velocity index (migration 016), never a scan of card_transactions', async function () {
      const cardKey = await newCard();
      const plan = await services.db.transaction(async (tx) => {
        await tx.query('SET LOCAL enable_seqscan = off');
        const controls: ApplicableSpendControls = { partner: {}, card: { velocity: [{ window: '1h', maxCount: 1 }, { window: '30d', maxCount: 1 }] } };
        const explained = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${COUNTS_SQL}`, countsParams(controls, { partnerId, cardKey, amount: 1, at: NOW }));
        return JSON.stringify(explained.rows[0]['QUERY PLAN']);
      });
      expect(plan).to.include('card_transactions_velocity_idx');
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
