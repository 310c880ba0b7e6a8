/**
 * Seeds many realistic card transactions for one partner, to measure the partner-wide transaction
 * search at scale (`GET /transactions`, docs/performance.md "Transaction search at 1,000,000
 * transactions"):
 *
 *   npm run -s seed:transactions -- --partner ID --count 1000000 [--database-url URL] [--batch 100000]
 *
 * The database is DATABASE_URL unless --database-url is given; it is migrated first, so a fresh
 * database works. The partner is created when it does not exist (no key: it cannot call the API
 * until a key is added through the admin API). At 1,000,000 transactions they spread over 20,000
 * cards (fewer for a smaller count: one card per 50 transactions, at least 5): 80 % of the cards
 * belong to about 7,000 individuals (two or three cards each), 20 % to 4 B2B tenants; the
 * individuals, tenants and cards are created too (users, onboardings, b2b_tenants, cards), so that
 * a search by a real cardKey or individualId finds its owner. Each transaction draws its card
 * uniformly. created_at spreads over the last 365 days; statuses are 85 % SETTLED, 5 % PENDING,
 * 4 % DECLINED, 3 % REVERSED, 3 % EXPIRED, types 80 % PURCHASE, 12 % WITHDRAWAL, 8 % REFUND (a
 * REFUND is SETTLED: the other types' statuses are drawn so that the overall shares hold). Each
 * row's `history` follows its status (SETTLED: authorization then clearing, a refund alone;
 * PENDING: authorization; DECLINED: decline, with a decline reason; REVERSED: authorization then
 * reversal; EXPIRED: authorization then expiry a week later), `version` is its length and
 * `updated_at` the last step's time. Rows are inserted in created_at order (as notifications
 * arrive); ids are 24 hex characters, a run nonce then a counter: a second run for the same partner
 * adds new ones. Each batch is one `INSERT ... SELECT
 * generate_series`; the end is `VACUUM (ANALYZE)` so that the planner has statistics at once.
 */
import crypto from 'node:crypto';
import type { QueryConfig } from 'pg';
import { Database } from '../gateway/db/database';
import { seedCli } from './seed-cli';

/** What to seed. */
export interface SeedTransactionsOptions {
  partnerId: string;
  count: number;
  batchSize?: number;
  /** Progress callback, called after each batch with the number of transactions inserted so far. */
  progress?: (inserted: number) => void;
}

/** What a seed run inserted. */
export interface SeedTransactionsResult {
  transactions: number;
  cards: number;
  individuals: number;
  tenants: number;
}

/** How many cards, individuals and tenants `count` transactions spread over. */
export function seedShape(count: number): { cards: number; individualCards: number; individuals: number; tenants: number } {
  const cards = Math.max(5, Math.min(MAX_CARDS, Math.ceil(count / TRANSACTIONS_PER_CARD)));
  const individualCards = Math.round(cards * INDIVIDUAL_SHARE);
  const individuals = Math.max(1, Math.round(individualCards * INDIVIDUALS_PER_INDIVIDUAL_CARD));
  const tenants = Math.max(1, Math.min(TENANTS, cards - individualCards));
  return { cards, individualCards, individuals, tenants };
}

const MAX_CARDS = 20_000;
const TRANSACTIONS_PER_CARD = 50;
const INDIVIDUAL_SHARE = 0.8;
// 16,000 individual cards over 7,000 individuals.
const INDIVIDUALS_PER_INDIVIDUAL_CARD = 7 / 16;
const TENANTS = 4;
/** How long one batch may take (the gateway's own queries stop at 15 s). */
const BATCH_TIMEOUT_MS = 10 * 60_000;

// Every seeded id derives from md5(partner, run nonce, kind, n): reproducible inside one run
// without a round trip, and a second run for the same partner never collides with the first.
// Tenants are per partner (as scripts/seed-cards.ts makes them): a second run reuses them.
const md5Id = (kind: string, n: string) => `substr(md5($1::text || ':' || $2::text || ':${kind}:' || (${n})), 1, 24)`;
const tenantId = (n: string) => `substr(md5($1::text || ':tenant:' || (${n})), 1, 24)`;
// A transaction's id: 8 hex characters of the run nonce, then n in 16 hex digits, so that a run's
// ids grow with its rows' created_at (as the processor's time-ordered ids do) and the primary key
// and the authorization index are appended to rather than written all over.
const transactionId = (n: string) => `substr($2::text, 1, 8) || lpad(to_hex(${n}), 16, '0')`;
const cardKey = (n: string) => `'CK' || upper(substr(md5($1::text || ':' || $2::text || ':card:' || (${n})), 1, 16))`;

const FIRST_NAMES = ['ADA', 'GRACE', 'ALAN', 'MARY', 'JOHN', 'EMMA', 'LIAM', 'OLIVIA', 'NOAH', 'SOFIA', 'LUCAS', 'MIA', 'LEON', 'ANNA', 'PAUL', 'CLARA'];
const LAST_NAMES = ['LOVELACE', 'HOPPER', 'TURING', 'SMITH', 'MUELLER', 'ROSSI', 'GARCIA', 'DUBOIS', 'NOVAK', 'SILVA', 'JANSEN', 'KOWALSKI', 'TANAKA', 'KHAN'];
// Merchants with their category code (ISO 18245), and the cities they are in.
const MERCHANTS: [string, string][] = [
  ['Tesco', '5411'], ['Carrefour', '5411'], ['Lidl', '5411'], ['Albert Heijn', '5411'], ['Shell', '5541'], ['BP', '5541'],
  ['Amazon EU', '5942'], ['Zalando', '5651'], ['IKEA', '5712'], ['MediaMarkt', '5732'], ['Apple Store', '5732'],
  ['Starbucks', '5814'], ['McDonalds', '5814'], ['Pret A Manger', '5812'], ['Uber', '4121'], ['Ryanair', '4511'],
  ['Deutsche Bahn', '4112'], ['Booking.com', '7011'], ['Netflix', '4899'], ['Spotify', '5815'], ['AWS', '5734'],
  ['Boots', '5912'], ['Decathlon', '5941'], ['H&M', '5651'],
];
const ATMS: [string, string][] = [['ATM Barclays', '6011'], ['ATM BNP Paribas', '6011'], ['ATM Deutsche Bank', '6011'], ['ATM ING', '6011'], ['ATM Santander', '6011']];
const CITIES: [string, string][] = [
  ['London', 'GB'], ['Manchester', 'GB'], ['Paris', 'FR'], ['Lyon', 'FR'], ['Berlin', 'DE'], ['Munich', 'DE'], ['Madrid', 'ES'],
  ['Barcelona', 'ES'], ['Rome', 'IT'], ['Milan', 'IT'], ['Amsterdam', 'NL'], ['Lisbon', 'PT'], ['Dublin', 'IE'], ['Vienna', 'AT'],
  ['Brussels', 'BE'], ['Warsaw', 'PL'], ['Zurich', 'CH'], ['New York', 'US'],
];
const DECLINE_REASONS = ['insufficient_funds', 'insufficient_funds', 'insufficient_funds', 'limit_exceeded', 'limit_exceeded', 'card_locked', 'card_expired', 'suspected_fraud', 'do_not_honor', 'mcc_blocked'];

const sqlArray = (values: string[]) => `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')}]`;
const pick = (values: string[], index: string) => `(${sqlArray(values)})[1 + ${index}]`;
const index = (random: string, length: number) => `floor(${random} * ${length})::int`;

/** A history step as the processor writes it: `{kind, amount, at}`, `at` in ISO 8601 UTC. */
const step = (kind: string, at: string) =>
  `jsonb_build_object('kind', '${kind}', 'amount', amount, 'at', to_char((${at}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;

/**
 * One batch of transactions `g = $3 .. $4`: the random draws are made once per row in `r` (the
 * lateral subquery refers to `g` so that it runs per row, not once), mapped to a card, a type, a
 * status, an amount and a merchant in `t`, then to the row. Parameters: $1 partner, $2 run nonce,
 * $5 cards, $6 individual cards (the first ones), $7 individuals, $8 tenants, $9 the seed's start, $10 the count.
 * Statuses of a PURCHASE or WITHDRAWAL: SETTLED 83.7 %, PENDING 5.43 %, DECLINED 4.35 %, REVERSED
 * and EXPIRED 3.26 % each, so that with the REFUNDs (8 %, all SETTLED) the overall shares are 85, 5,
 * 4, 3 and 3 % (an EXPIRED draw younger than a week is PENDING: 0.06 % of the rows). Currencies:
 * EUR 88 %, GBP 7 %, USD 3 %, CHF 2 %.
 * Each level ends in `OFFSET 0` so that the planner keeps it a subquery: flattened, every reference
 * to one of its columns would evaluate that column's expression again (the history three times,
 * the status and amount in every step): computing a batch of 100,000 rows took 9.7 s instead of 3.7 s.
 */
const TRANSACTION_BATCH_SQL = `
INSERT INTO card_transactions (id, partner_id, card_key, individual_id, tenant_id, authorization_id, amount, currency, type, status,
                               merchant, settled_amount, decline_reason, related_transaction_id, history, version, created_at, updated_at)
SELECT id, $1::text, card_key, individual_id, tenant_id, authorization_id, amount, currency, type, status, merchant,
       CASE WHEN status = 'SETTLED' THEN amount END, decline_reason, related_transaction_id, history, jsonb_array_length(history),
       created_at, CASE WHEN jsonb_array_length(history) = 1 THEN created_at ELSE second_at END
FROM (
  SELECT *,
         CASE
           WHEN type = 'REFUND' THEN jsonb_build_array(${step('refund', 'created_at')})
           WHEN status = 'SETTLED' THEN jsonb_build_array(${step('authorization', 'created_at')}, ${step('clearing', 'second_at')})
           WHEN status = 'PENDING' THEN jsonb_build_array(${step('authorization', 'created_at')})
           WHEN status = 'DECLINED' THEN jsonb_build_array(${step('decline', 'created_at')})
           WHEN status = 'REVERSED' THEN jsonb_build_array(${step('authorization', 'created_at')}, ${step('reversal', 'second_at')})
           ELSE jsonb_build_array(${step('authorization', 'created_at')}, ${step('expiry', 'second_at')})
         END AS history
  FROM (
    SELECT *,
           -- The second step: a clearing 1 to 72 hours after the authorization, a reversal 1 minute to
           -- a day after, an expiry 7 days after; never in the future.
           least(now(), created_at + CASE status WHEN 'SETTLED' THEN interval '1 hour' + r2 * interval '71 hours'
                                                 WHEN 'REVERSED' THEN interval '1 minute' + r2 * interval '1 day'
                                                 ELSE interval '7 days' + r2 * interval '1 hour' END) AS second_at
    FROM (
      SELECT g, r2,
             ${transactionId('g')} AS id,
             'AUTH' || upper(${transactionId('g')}) AS authorization_id,
             ${cardKey('c')} AS card_key,
             CASE WHEN c < $6 THEN ${md5Id('onboarding', 'c % $7')} END AS individual_id,
             CASE WHEN c >= $6 THEN ${tenantId('(c - $6) % $8')} END AS tenant_id,
             type, status,
             CASE type WHEN 'WITHDRAWAL' THEN (20 * (1 + floor(r_amount * 15)))::numeric(20, 4)
                       WHEN 'REFUND' THEN round((5 + 145 * r_amount)::numeric, 2)
                       ELSE round((1 + 399 * r_amount * r_amount * r_amount)::numeric, 2) END AS amount,
             CASE WHEN r_currency < 0.88 THEN 'EUR' WHEN r_currency < 0.95 THEN 'GBP' WHEN r_currency < 0.98 THEN 'USD' ELSE 'CHF' END AS currency,
             jsonb_build_object(
               'name', CASE WHEN type = 'WITHDRAWAL' THEN ${pick(ATMS.map((m) => m[0]), index('r_merchant', ATMS.length))}
                            ELSE ${pick(MERCHANTS.map((m) => m[0]), index('r_merchant', MERCHANTS.length))} END,
               'mcc', CASE WHEN type = 'WITHDRAWAL' THEN '6011'
                           ELSE ${pick(MERCHANTS.map((m) => m[1]), index('r_merchant', MERCHANTS.length))} END,
               'city', ${pick(CITIES.map((m) => m[0]), index('r_city', CITIES.length))},
               'country', ${pick(CITIES.map((m) => m[1]), index('r_city', CITIES.length))}) AS merchant,
             CASE WHEN status = 'DECLINED' THEN ${pick(DECLINE_REASONS, index('r2', DECLINE_REASONS.length))} END AS decline_reason,
             -- A refund refunds a purchase of the same run made before it (in insertion order).
             CASE WHEN type = 'REFUND' AND g > 1 THEN ${transactionId('greatest(1, g - 1 - floor(r2 * 1000)::bigint)')} END AS related_transaction_id,
             created_at
      FROM (
        SELECT g, r.*, floor(r.r_card * $5)::int AS c, created_at,
               CASE WHEN r.r_type < 0.80 THEN 'PURCHASE' WHEN r.r_type < 0.92 THEN 'WITHDRAWAL' ELSE 'REFUND' END AS type,
               CASE WHEN r.r_type >= 0.92 OR r.r_status < 0.8370 THEN 'SETTLED' WHEN r.r_status < 0.8913 THEN 'PENDING'
                    WHEN r.r_status < 0.9348 THEN 'DECLINED' WHEN r.r_status < 0.9674 THEN 'REVERSED'
                    -- An authorization expires after seven days: a younger one is still PENDING.
                    WHEN created_at > $9::timestamptz - interval '7 days' THEN 'PENDING' ELSE 'EXPIRED' END AS status
        FROM generate_series($3::bigint, $4::bigint) AS g
        CROSS JOIN LATERAL (
          SELECT random() AS r_card, random() AS r_type, random() AS r_status, random() AS r_amount, random() AS r_currency,
                 random() AS r_merchant, random() AS r_city, random() AS r_time, random() AS r2, g AS drawn_for
        ) AS r
        -- Transaction g of N in the g-th of N equal slots of the 365 days before the seed started,
        -- at a random point of it: rows arrive in time order, as the processor's notifications do.
        CROSS JOIN LATERAL (
          SELECT $9::timestamptz - interval '365 days' + ((g - 1 + r.r_time) / $10::float8) * interval '365 days' AS created_at
        ) AS at
        OFFSET 0) AS drawn
      OFFSET 0) AS t
    OFFSET 0) AS timed
  OFFSET 0) AS seeded`;

/**
 * Seeds `count` transactions for a partner on a migrated database (creates the partner, its
 * tenants, the individuals and the cards they belong to). Returns what it inserted.
 */
export async function seedTransactions(db: Database, options: SeedTransactionsOptions): Promise<SeedTransactionsResult> {
  const { partnerId, count } = options;
  const batchSize = options.batchSize ?? 100_000;
  const nonce = crypto.randomBytes(6).toString('hex');
  const { cards, individualCards, individuals, tenants } = seedShape(count);
  // The end of the year the transactions spread over, fixed for the whole run.
  const startedAt = new Date().toISOString();

  await db.query(
    `INSERT INTO partners (id, name, issuer) VALUES ($1::text, 'seed-' || $1::text, 'https://seed-' || $1::text || '.example') ON CONFLICT (id) DO NOTHING`,
    [partnerId]
  );
  await db.query(
    `INSERT INTO b2b_tenants (id, partner_id, name)
     SELECT ${tenantId('g')}, $1::text, 'Seed tenant ' || g FROM generate_series(0, $2::int - 1) AS g
     ON CONFLICT (id) DO NOTHING`,
    [partnerId, tenants]
  );
  await db.query(
    `INSERT INTO users (id, partner_id, email, first_name, last_name)
     SELECT ${md5Id('user', 'g')}, $1::text, 'seed-tx-' || $2::text || '-' || g || '@example.com',
            ${pick(FIRST_NAMES, index('random()', FIRST_NAMES.length))}, ${pick(LAST_NAMES, index('random()', LAST_NAMES.length))}
     FROM generate_series(0, $3 - 1) AS g`,
    [partnerId, nonce, individuals]
  );
  await db.query(
    `INSERT INTO individual_onboardings (id, partner_id, user_id, client_id, personal_info, address, application_status, dashboard_status, provisioning, created_at, updated_at)
     SELECT ${md5Id('onboarding', 'g')}, $1::text, u.id, (300000000 + floor(random() * 600000000))::bigint::text,
            jsonb_build_object('firstName', u.first_name, 'lastName', u.last_name, 'idType', 'PASSPORT'),
            jsonb_build_object('country', 'DE', 'city', 'Berlin'), 'APPROVED', 'ACTIVE', 'complete', created, created
     FROM generate_series(0, $3 - 1) AS g
     JOIN users u ON u.id = ${md5Id('user', 'g')}
     CROSS JOIN LATERAL (SELECT now() - interval '400 days' - random() * interval '600 days' AS created, g AS drawn_for) AS c`,
    [partnerId, nonce, individuals]
  );
  await db.query(
    `INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code,
                        currency, product_code, exp_date, created_at, updated_at)
     SELECT card_key, $1::text, CASE WHEN individual_id IS NULL THEN 'b2b' ELSE 'individual' END, coalesce(individual_id, tenant_id),
            individual_id, tenant_id, '5355 70** **** ' || lpad((g % 10000)::text, 4, '0'),
            CASE WHEN g % 5 < 3 THEN 'virtual' ELSE 'physical' END, 'ACTIVE', '00', 'EUR',
            CASE WHEN individual_id IS NULL THEN 'P-BIZ' ELSE 'P-STD' END, '12/' || (2027 + g % 4), created, created
     FROM (
       SELECT g, ${cardKey('g')} AS card_key,
              CASE WHEN g < $4 THEN ${md5Id('onboarding', 'g % $5')} END AS individual_id,
              CASE WHEN g >= $4 THEN ${tenantId('(g - $4) % $6')} END AS tenant_id,
              now() - interval '370 days' - (g % 30) * interval '1 day' AS created
       FROM generate_series(0, $3 - 1) AS g
     ) AS seeded`,
    [partnerId, nonce, cards, individualCards, individuals, tenants]
  );

  let inserted = 0;
  for (let first = 1; first <= count; first += batchSize) {
    const last = Math.min(count, first + batchSize - 1);
    // Without the gateway's 15 s query timeout: a batch on a slow machine or a large database may take longer.
    await db.pool.query({
      text: TRANSACTION_BATCH_SQL,
      values: [partnerId, nonce, first, last, cards, individualCards, individuals, tenants, startedAt, count],
      query_timeout: BATCH_TIMEOUT_MS,
    } as QueryConfig);
    inserted = last;
    options.progress?.(inserted);
  }
  await db.query('VACUUM (ANALYZE) card_transactions');
  await db.query('ANALYZE cards, individual_onboardings, users, b2b_tenants');
  return { transactions: inserted, cards, individuals, tenants };
}

if (require.main === module) seedCli('seed:transactions', 'transactions', seedTransactions);
