/**
 * Seeds many realistic cards for one partner, to measure the partner-wide card list at scale
 * (docs/card-search.md):
 *
 *   npm run -s seed:cards -- --partner ID --count 1000000 [--database-url URL] [--batch 100000]
 *
 * The database is DATABASE_URL unless --database-url is given; it is migrated first, so a fresh
 * database works. The partner is created when it does not exist (no key: it cannot call the API
 * until a key is added through the admin API). Cards are 80 % individual (about three per
 * individual unless `individuals` says how many; their users and complete onboardings are created
 * too, as gateway/individuals/individual-store.ts writes them) and 20 % B2B (over a few tenants), with
 * realistic mixes of status, type and currency, masks like `5355 70** **** 1234`, nicknames on about
 * a third and embossed names on most. Each batch is one `INSERT ... SELECT generate_series`; the end
 * is the search links' backfill (a no-op unless the database held cards before migration 022, see
 * docs/card-search.md) and `VACUUM (ANALYZE)` of the cards and their search links, so the planner has
 * statistics and index-only counts work at once.
 */
import crypto from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Database } from '../gateway/db/database';
import { backfillSearchLinks } from '../gateway/cards/search-links';
import { seedCli } from './seed-cli';

/** What to seed. */
export interface SeedOptions {
  partnerId: string;
  count: number;
  batchSize?: number;
  /** How many individuals the individual cards spread over (default: one per three of them). */
  individuals?: number;
  /** `VACUUM (ANALYZE)` the cards and their search links at the end (default true). */
  vacuum?: boolean;
  /** Progress callback, called after each batch with the number of cards inserted so far. */
  progress?: (inserted: number) => void;
}

/** What a seed run inserted. */
export interface SeedResult {
  cards: number;
  individuals: number;
  tenants: number;
}

// Share of individual cards (the rest are B2B) and cards per individual.
const INDIVIDUAL_SHARE = 0.8;
const CARDS_PER_INDIVIDUAL = 3;
const CARDS_PER_TENANT = 20_000;

// Every seeded id derives from md5(partner, run nonce, kind, n): reproducible inside one run
// without a round trip, and a second run for the same partner never collides with the first.
const seededId = (kind: string) => `substr(md5($1::text || ':' || $2::text || ':${kind}:' || g), 1, 24)`;

const NICKNAMES = [
  'Travel', 'Groceries', 'Fuel', 'Office supplies', 'Marketing', 'Subscriptions', 'Holiday fund', 'Team lunch',
  'Software', 'Ads budget', 'Savings', 'Kids', 'Rent', 'Utilities', 'Hardware', 'Events', 'Training',
  'Online shopping', 'Backup card', 'Daily spending', 'Cloud hosting', 'Recruiting', 'Conference', 'Petty cash',
];
const FIRST_NAMES = [
  'ADA', 'GRACE', 'ALAN', 'MARY', 'JOHN', 'EMMA', 'LIAM', 'OLIVIA', 'NOAH', 'SOFIA', 'LUCAS', 'MIA', 'LEON', 'ANNA',
  'PAUL', 'CLARA', 'MARCO', 'ELENA', 'IVAN', 'NINA', 'OMAR', 'LEILA', 'KENJI', 'YUKI', 'PEDRO', 'ZOE',
];
const LAST_NAMES = [
  'LOVELACE', 'HOPPER', 'TURING', 'SOMERVILLE', 'SMITH', 'MUELLER', 'ROSSI', 'GARCIA', 'DUBOIS', 'NOVAK', 'SILVA',
  'JANSEN', 'KOWALSKI', 'NIELSEN', 'PAPADOPOULOS', 'OBRIEN', 'TANAKA', 'HANSEN', 'IVANOV', 'MORENO', 'KHAN', 'FISCHER',
];
const COMPANIES = ['ACME-LTD', 'GLOBEX', 'INITECH', 'UMBRELLA-CO', 'STARK-IND', 'WAYNE-ENT', 'HOOLI', 'VANDELAY'];

const sqlArray = (values: string[]) => `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')}]`;
const pick = (values: string[], random: string) => `(${sqlArray(values)})[1 + floor(${random} * ${values.length})::int]`;

/**
 * One batch of cards `g = $3 .. $4` of `$7`: the random draws are made once per row in `r` (the
 * lateral subquery refers to `g` so that it runs per row, not once), then mapped to
 * realistic values. Statuses: ACTIVE 72 %, LOCKED 8 % (I1 for a physical card not yet activated,
 * L1 otherwise), CLOSED 8 %, TEMP_LOCKED 4 %, RESTRICTED/LOST/MOBILE_LOST 2 % each,
 * STOLEN/FRAUD 1 % each. Types: virtual 60 %, physical 40 %. Currencies: EUR 60 %, USD 20 %,
 * GBP 15 %, CHF 5 %. Nickname on 35 %; embossed name on every physical card and half the virtual
 * ones. created_at spreads the cards over the last three years in insertion order.
 */
const CARD_BATCH_SQL = `
INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, tenant_id, card_mask, type, status, status_code,
                   currency, product_code, holder_client_code, exp_date, embossed_name, nickname, created_at, updated_at)
SELECT card_key, $1::text, owner_type, owner_id, CASE WHEN owner_type = 'individual' THEN owner_id END,
       CASE WHEN owner_type = 'b2b' THEN owner_id END, card_mask, type, status, status_code, currency, product_code,
       holder_client_code, exp_date, embossed_name, nickname, created_at, created_at
FROM (
  SELECT 'CK' || upper(substr(md5($1::text || ':' || $2::text || ':card:' || g), 1, 16)) AS card_key,
         CASE WHEN r.owner < ${INDIVIDUAL_SHARE} THEN 'individual' ELSE 'b2b' END AS owner_type,
         CASE WHEN r.owner < ${INDIVIDUAL_SHARE} THEN substr(md5($1::text || ':' || $2::text || ':onboarding:' || (g % $5)), 1, 24)
              ELSE substr(md5($1::text || ':tenant:' || (g % $6)), 1, 24) END AS owner_id,
         CASE WHEN r.bin < 0.85 THEN '5355 70** **** ' ELSE '4921 83** **** ' END || lpad(floor(r.last4 * 10000)::int::text, 4, '0') AS card_mask,
         CASE WHEN r.type < 0.6 THEN 'virtual' ELSE 'physical' END AS type,
         s.status, CASE WHEN s.status = 'LOCKED' AND r.type >= 0.6 AND r.status < 0.78 THEN 'I1' ELSE s.status_code END AS status_code,
         CASE WHEN r.currency < 0.6 THEN 'EUR' WHEN r.currency < 0.8 THEN 'USD' WHEN r.currency < 0.95 THEN 'GBP' ELSE 'CHF' END AS currency,
         CASE WHEN r.owner < ${INDIVIDUAL_SHARE} THEN (CASE WHEN r.product < 0.8 THEN 'P-STD' ELSE 'P-PREM' END) ELSE 'P-BIZ' END AS product_code,
         ($8::bigint + (g % $5))::text AS holder_client_code,
         lpad((1 + floor(r.exp_month * 12))::int::text, 2, '0') || '/' || (2026 + floor(r.exp_year * 5))::int AS exp_date,
         CASE WHEN r.type >= 0.6 OR r.embossed < 0.5 THEN
           CASE WHEN r.owner < ${INDIVIDUAL_SHARE} THEN ${pick(FIRST_NAMES, 'r.first')} || '.' || ${pick(LAST_NAMES, 'r.last')}
                ELSE ${pick(COMPANIES, 'r.first')} END
         END AS embossed_name,
         CASE WHEN r.nickname < 0.35 THEN
           ${pick(NICKNAMES, 'r.nickname / 0.35')} || CASE WHEN r.suffix < 0.4 THEN ' ' || (1 + floor(r.suffix * 250))::int ELSE '' END
         END AS nickname,
         now() - interval '3 years' + (g::float8 / $7) * interval '3 years' - r.jitter * interval '1 minute' AS created_at
  FROM generate_series($3::bigint, $4::bigint) AS g
  CROSS JOIN LATERAL (
    SELECT random() AS owner, random() AS bin, random() AS last4, random() AS type, random() AS status, random() AS currency,
           random() AS product, random() AS exp_month, random() AS exp_year, random() AS embossed, random() AS first,
           random() AS last, random() AS nickname, random() AS suffix, random() AS jitter, g AS drawn_for
  ) AS r
  CROSS JOIN LATERAL (
    SELECT CASE WHEN r.status < 0.72 THEN 'ACTIVE' WHEN r.status < 0.80 THEN 'LOCKED' WHEN r.status < 0.88 THEN 'CLOSED'
                WHEN r.status < 0.92 THEN 'TEMP_LOCKED' WHEN r.status < 0.94 THEN 'RESTRICTED' WHEN r.status < 0.96 THEN 'LOST'
                WHEN r.status < 0.98 THEN 'MOBILE_LOST' WHEN r.status < 0.99 THEN 'STOLEN' ELSE 'FRAUD' END AS status
  ) AS st
  CROSS JOIN LATERAL (
    SELECT st.status, CASE st.status WHEN 'ACTIVE' THEN '00' WHEN 'LOCKED' THEN 'L1' WHEN 'CLOSED' THEN 'S4' WHEN 'TEMP_LOCKED' THEN 'T1'
                      WHEN 'RESTRICTED' THEN 'S1' WHEN 'LOST' THEN 'S2' WHEN 'MOBILE_LOST' THEN 'S6' WHEN 'STOLEN' THEN 'S3'
                      ELSE 'S5' END AS status_code
  ) AS s
) AS seeded`;

/**
 * The first clientID of a run's individuals: a multiple of 1,000,000 from 10^9 up, drawn from the
 * run nonce, so that two runs (two partners) do not share clientIDs (the ownership of a clientID is
 * looked up by it alone) while a run's cards carry their individual's (`holder_client_code`).
 */
export function clientIdBase(nonce: string): number {
  return 1_000_000_000 + (parseInt(nonce.slice(0, 8), 16) % 1_000_000) * 1_000_000;
}

/**
 * Seeds `count` individuals `g = 0 .. count - 1` of a partner for a run (`nonce`): each a user and
 * a complete onboarding in the shape gateway/individuals/individual-store.ts writes (every
 * personalInfo and address field, APPROVED and ACTIVE, a clientID and an account id). Individual g
 * is onboarded a day before card g of the run's `cardCount` cards is created (card 0: the first),
 * so its cards come after it, and inserted in that order (as the gateway appends them). Ids are
 * those {@link seedCards} gives the cards' owners.
 */
export async function seedIndividuals(db: Database, o: { partnerId: string; nonce: string; count: number; cardCount: number }): Promise<void> {
  await db.query(
    `INSERT INTO users (id, partner_id, email, first_name, middle_name, last_name, phone, created_at)
     SELECT ${seededId('user')}, $1::text, 'seed' || g || '.' || $2::text || '@example.com', ${pick(FIRST_NAMES, 'random()')}, '',
            ${pick(LAST_NAMES, 'random()')}, '+4420' || lpad((g % 100000000)::text, 8, '0'),
            now() - interval '3 years' + (least(g, $4)::float8 / greatest($4, 1)) * interval '3 years' - interval '1 day'
     FROM generate_series(0, $3 - 1) AS g`,
    [o.partnerId, o.nonce, o.count, o.cardCount]
  );
  await db.query(
    `INSERT INTO individual_onboardings (id, partner_id, user_id, client_id, account_id, personal_info, address, application_status, dashboard_status, provisioning, created_at, updated_at)
     SELECT ${seededId('onboarding')}, $1::text, u.id, ($4::bigint + g)::text, 'ACC' || ($4::bigint + g)::text,
            jsonb_build_object('firstName', u.first_name, 'middleName', '', 'lastName', u.last_name, 'birthDate', '1985-06-15',
              'birthCountry', 'GB', 'nationality', 'GB', 'email', u.email, 'phone', u.phone, 'idType', 'PASSPORT',
              'passportNumber', 'P' || lpad(g::text, 8, '0'), 'passportCountry', 'GB', 'issuingDate', '2020-01-10',
              'validityDate', '2030-01-09', 'taxCountry', 'GB', 'taxIdNumber', 'P' || lpad(g::text, 8, '0'), 'fatca', 'F'),
            jsonb_build_object('address1', (1 + g % 200) || ' High Street', 'address2', NULL, 'buildingNumber', (1 + g % 200)::text,
              'city', 'London', 'stateProvince', NULL, 'zipCode', 'EC1A 1BB', 'country', 'GB'),
            'APPROVED', 'ACTIVE', 'complete', u.created_at, u.created_at
     FROM generate_series(0, $3 - 1) AS g JOIN users u ON u.id = ${seededId('user')}
     ORDER BY g`,
    [o.partnerId, o.nonce, o.count, clientIdBase(o.nonce)]
  );
}

/**
 * Seeds `count` cards for a partner on a migrated database (creates the partner, its tenants and
 * the individuals the cards belong to). Returns what it inserted.
 */
export async function seedCards(db: Database, options: SeedOptions): Promise<SeedResult> {
  const { partnerId, count } = options;
  const batchSize = options.batchSize ?? 100_000;
  const nonce = crypto.randomBytes(6).toString('hex');
  const individuals = options.individuals ?? Math.max(1, Math.ceil((count * INDIVIDUAL_SHARE) / CARDS_PER_INDIVIDUAL));
  const tenants = Math.max(1, Math.ceil((count * (1 - INDIVIDUAL_SHARE)) / CARDS_PER_TENANT));

  await db.query(
    `INSERT INTO partners (id, name, issuer) VALUES ($1::text, 'seed-' || $1::text, 'https://seed-' || $1::text || '.example') ON CONFLICT (id) DO NOTHING`,
    [partnerId]
  );
  // Tenants are per partner, not per run: a second run adds cards to the same tenants.
  await db.query(
    `INSERT INTO b2b_tenants (id, partner_id, name)
     SELECT substr(md5($1::text || ':tenant:' || g), 1, 24), $1::text, 'Seed tenant ' || g FROM generate_series(0, $2::int - 1) AS g
     ON CONFLICT (id) DO NOTHING`,
    [partnerId, tenants]
  );
  await seedIndividuals(db, { partnerId, nonce, count: individuals, cardCount: count });

  let inserted = 0;
  for (let first = 1; first <= count; first += batchSize) {
    const last = Math.min(count, first + batchSize - 1);
    await db.query(CARD_BATCH_SQL, [partnerId, nonce, first, last, individuals, tenants, count, clientIdBase(nonce)]);
    inserted = last;
    options.progress?.(inserted);
  }
  // Cards the database held before migration 022 are linked now (a no-op when its backfill is done:
  // the seed's own cards were linked by the insert trigger), so searches read the search links.
  // A gateway's job running a batch meanwhile (`busy`) goes on after it: wait for it, then go on.
  while (!(await backfillSearchLinks(db, { batch: 20_000 })).done) await delay(500);
  if (options.vacuum ?? true) await db.query('VACUUM (ANALYZE) cards, card_search_links, card_search_terms');
  return { cards: inserted, individuals, tenants };
}

if (require.main === module) seedCli('seed:cards', 'cards', seedCards);
