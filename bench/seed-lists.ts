/**
 * The data of `npm run bench:lists` (bench/list-routes.ts; docs/performance.md, "List routes at
 * scale"), in one database:
 *
 *   npm run -s seed:lists -- [--database-url URL] [--smoke] [--batch 100000]
 *
 * The database is DATABASE_URL unless --database-url is given; it is migrated first, so a fresh
 * database works, and seeded once (a database that holds a seed already is refused). Two partners,
 * each without a key (the bench adds one through the admin API):
 *
 * | partner | individuals | cards | audit entries | card status history |
 * |---|---|---|---|---|
 * | large | 100,000 | 1,000,000 | 1,000,000 | 1,000,000 |
 * | small | 1,000 | 1,000 | 1,000 | 1,000 |
 *
 * and in each a **measured individual** holding a large share of its partner's individual-scoped
 * rows, where the individual's routes are measured: in the large partner 10,000 cards (3,000
 * ACTIVE), 100,000 audit entries and 100,000 status changes; in the small one 500 of its
 * partner's 1,000 cards (300 ACTIVE: its card list answers the same default page of 100 as the
 * large one's) and all of its partner's 1,000 audit entries and 1,000 status changes. `--smoke` seeds 2,000 of each in
 * the large partner (500 individuals; the measured one 100 cards, 30 ACTIVE, 200 entries of each
 * history) and 200 in the small one (50 individuals; 10 cards, 3 ACTIVE, all 200 entries).
 *
 * How, all set-based (`INSERT … SELECT generate_series`, batches of `--batch` rows):
 * - the cards, and every individual but the measured one, by scripts/seed-cards (`seedCards`: 80 %
 *   individual cards spread over the partner's individuals, 20 % B2B over its tenants; users and
 *   complete onboardings as gateway/individuals/individual-store.ts writes them; every card through
 *   the search-link triggers of migration 022);
 * - the measured individual by the same code (`seedIndividuals`: onboarded before every card), and
 *   its cards copied from the partner's other individual cards (mask, type, currency, names) under
 *   new keys, with its own clientID and statuses (an even spread of ACTIVE, the rest LOCKED, CLOSED,
 *   TEMP_LOCKED or LOST), inserted through the same triggers;
 * - the audit entries and the status changes spread over the three years of the cards, inserted in
 *   time order (as the gateway appends them), the measured individual's interleaved with the
 *   others' (one row in ten in the large partner: its newest page lies on as many heap pages as it
 *   would in production): each names one of the individual's cards (an audit entry sometimes the
 *   individual itself); operations, outcomes, details and statuses are drawn from the gateway's own
 *   (card.lock {from, to}, card.issue with no old status...), not replayed card by card, so a card's
 *   history does not lead to its current status;
 * - `VACUUM (ANALYZE)` of every table written, then one row per partner in `bench_lists_seed` (its
 *   id, the measured individual's, the shape, the seconds), which the bench reads back with
 *   `--database`. The row counts are checked against the shape.
 *
 * 1,000,000 cards take about 2 to 4 minutes (docs/performance.md, S5), the rest about as long again.
 */
import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { Database } from '../gateway/db/database';
import { migrate } from '../gateway/db/migrate';
import { createLogger } from '../gateway/logging/logger';
import { clientIdBase, seedCards, seedIndividuals } from '../scripts/seed-cards';

/** What one partner holds. */
export interface PartnerShape {
  individuals: number;
  cards: number;
  auditEntries: number;
  statusHistory: number;
  /** What the measured individual holds of it. */
  measured: { cards: number; activeCards: number; auditEntries: number; statusHistory: number };
}

/** The two partners of a seed. */
export interface ListsShape {
  large: PartnerShape;
  small: PartnerShape;
}

/** The sizes of the list routes' target (100,000 individuals, 1,000,000 cards and audit entries) beside 1,000 of each. */
export const LISTS_SHAPE: ListsShape = {
  large: {
    individuals: 100_000,
    cards: 1_000_000,
    auditEntries: 1_000_000,
    statusHistory: 1_000_000,
    measured: { cards: 10_000, activeCards: 3_000, auditEntries: 100_000, statusHistory: 100_000 },
  },
  small: {
    individuals: 1_000,
    cards: 1_000,
    auditEntries: 1_000,
    statusHistory: 1_000,
    measured: { cards: 500, activeCards: 300, auditEntries: 1_000, statusHistory: 1_000 },
  },
};

/** `--smoke`: seconds to seed, enough to prove the harness. */
export const SMOKE_SHAPE: ListsShape = {
  large: { individuals: 500, cards: 2_000, auditEntries: 2_000, statusHistory: 2_000, measured: { cards: 100, activeCards: 30, auditEntries: 200, statusHistory: 200 } },
  small: { individuals: 50, cards: 200, auditEntries: 200, statusHistory: 200, measured: { cards: 10, activeCards: 3, auditEntries: 200, statusHistory: 200 } },
};

export type PartnerSize = keyof ListsShape;

/** One seeded partner, as `bench_lists_seed` keeps it. */
export interface SeededPartner {
  size: PartnerSize;
  partnerId: string;
  /** The measured individual. */
  individualId: string;
  shape: PartnerShape;
  /** Seconds its seed took. */
  seconds: number;
}

/** What a seed made: both partners, and the seconds of the whole seed (VACUUM and checks included). */
export interface ListsSeed {
  large: SeededPartner;
  small: SeededPartner;
  seconds: number;
}

/** The partners' rows of the other individuals' cards, numbered from 0, so that a row can draw one by its number. */
const NUMBERED_CARDS = 'seed_lists_cards';

// A seeded row's public id as the gateway makes them (gateway/ids.ts): its creation second, then 16
// hex characters, here from md5(partner, run nonce, kind, n) so that a run's ids never collide.
const publicId = (kind: string) => `lpad(to_hex(floor(extract(epoch FROM created_at))::bigint), 8, '0') || substr(md5($1::text || ':' || $2::text || ':${kind}:' || g), 1, 16)`;
// The measured individual's card n (1-based) of the run: the key its cards are inserted under.
const measuredCardKey = (n: string) => `'CK' || upper(substr(md5($1::text || ':' || $2::text || ':measured-card:' || (${n})), 1, 16))`;
// Row g of `total` belongs to the measured individual when it is one of `share` rows spread evenly.
const isMeasured = (share: string, total: string) => `floor((g + 1)::numeric * ${share} / ${total}) > floor(g::numeric * ${share} / ${total})`;
// Another individual's card for row g: a multiplicative hash over the numbered cards.
const otherCard = (others: string) => `(g * 2654435761) % ${others}`;

/**
 * The measured individual's cards: each copies the values of one of the partner's other individual
 * cards under a new key; `$5` of the `$3` are ACTIVE, spread evenly, the others LOCKED, CLOSED,
 * TEMP_LOCKED or LOST; created over the three years. The insert trigger links them for search.
 */
const MEASURED_CARDS_SQL = `
INSERT INTO cards (card_key, partner_id, owner_type, owner_id, individual_id, card_mask, type, status, status_code, currency, product_code,
                   holder_client_code, exp_date, embossed_name, nickname, created_at, updated_at)
SELECT ${measuredCardKey('k')}, $1::text, 'individual', $4::text, $4::text, s.card_mask, s.type, st.status, st.status_code, s.currency, s.product_code,
       $7::text, s.exp_date, s.embossed_name, s.nickname, st.created_at, st.created_at
FROM generate_series(1, $3::int) AS k
JOIN ${NUMBERED_CARDS} o ON o.partner_id = $1::text AND o.n = (k::bigint * 7919) % $6::bigint
JOIN cards s ON s.card_key = o.card_key
CROSS JOIN LATERAL (
  SELECT CASE WHEN floor(k::numeric * $5::numeric / $3::numeric) > floor((k - 1)::numeric * $5::numeric / $3::numeric) THEN 'ACTIVE'
              ELSE (ARRAY['LOCKED', 'CLOSED', 'TEMP_LOCKED', 'LOST'])[1 + k % 4] END AS status,
         CASE WHEN floor(k::numeric * $5::numeric / $3::numeric) > floor((k - 1)::numeric * $5::numeric / $3::numeric) THEN '00'
              ELSE (ARRAY['L1', 'S4', 'T1', 'S2'])[1 + k % 4] END AS status_code,
         now() - interval '3 years' + (k::float8 / $3::float8) * interval '3 years' AS created_at
) AS st
ORDER BY k`;

// Audit operations drawn for a card, with their details as the gateway writes them.
const CARD_AUDIT = `(ARRAY['card.lock', 'card.unlock', 'card.temporary-lock', 'card.nickname.update', 'card.limits.update', 'card.pan.read',
                           'card.cvv.read', 'card.spend-controls.update', 'card.issue.virtual', 'card.restrict.closed'])`;
const CARD_AUDIT_DETAILS = `(ARRAY['{"from": "00", "to": "L1"}', '{"from": "L1", "to": "00"}', '{"from": "00", "to": "T1"}', '{}', '{}', '{}', '{}', '{}',
                                   '{"cardMask": "5355 70** **** 1234", "type": "virtual"}', '{"from": "00", "to": "S4"}'])`;

/**
 * Audit entries `g = $3 .. $4` of `$5`, `$6` of them the measured individual's (`$7`, its cards
 * `$8`), the others on the `$9` numbered cards of the partner's other individuals. 5 % of the
 * others' entries are their individual's creation; 3 % of all are failures.
 */
const AUDIT_BATCH_SQL = `
INSERT INTO audit_log (public_id, partner_id, individual_id, operation, target_type, target_id, request_id, outcome, details, created_at)
SELECT ${publicId('audit')}, $1::text, individual_id, operation, target_type, target_id, gen_random_uuid()::text, outcome, details::jsonb, created_at
FROM (
  SELECT g, x.individual_id, x.created_at,
         CASE WHEN x.individual_entry THEN 'individual.create' ELSE ${CARD_AUDIT}[x.op] END AS operation,
         CASE WHEN x.individual_entry THEN 'individual' ELSE 'card' END AS target_type,
         CASE WHEN x.individual_entry THEN x.individual_id::text ELSE x.card_key END AS target_id,
         CASE WHEN x.failed THEN 'failure' ELSE 'success' END AS outcome,
         CASE WHEN x.failed THEN '{"reason": "upstream_error"}' WHEN x.individual_entry THEN '{}' ELSE ${CARD_AUDIT_DETAILS}[x.op] END AS details
  FROM (
    SELECT g, m.measured,
           CASE WHEN m.measured THEN $7::text ELSE o.individual_id END AS individual_id,
           CASE WHEN m.measured THEN ${measuredCardKey('1 + (g * 7919) % $8::bigint')} ELSE o.card_key END AS card_key,
           NOT m.measured AND r.kind < 0.05 AS individual_entry, 1 + floor(r.op * 10)::int AS op, r.fail < 0.03 AS failed,
           now() - interval '3 years' + (g::float8 / $5::float8) * interval '3 years' AS created_at
    FROM generate_series($3::bigint, $4::bigint) AS g
    CROSS JOIN LATERAL (SELECT ${isMeasured('$6::bigint', '$5::bigint')} AS measured) AS m
    LEFT JOIN ${NUMBERED_CARDS} o ON NOT m.measured AND o.partner_id = $1::text AND o.n = ${otherCard('$9::bigint')}
    CROSS JOIN LATERAL (SELECT random() AS kind, random() AS op, random() AS fail, g AS drawn_for) AS r
    OFFSET 0
  ) AS x
  OFFSET 0
) AS entry
ORDER BY g`;

// Status changes drawn for a card (the i-th of each array): old and new status and code, the operation that made it.
const TRANSITIONS = {
  old_status: "(ARRAY[NULL, 'ACTIVE', 'LOCKED', 'ACTIVE', 'TEMP_LOCKED', 'LOCKED', 'ACTIVE', 'ACTIVE'])",
  new_status: "(ARRAY['ACTIVE', 'LOCKED', 'ACTIVE', 'TEMP_LOCKED', 'ACTIVE', 'ACTIVE', 'LOST', 'CLOSED'])",
  old_code: "(ARRAY[NULL, '00', 'L1', '00', 'T1', 'I1', '00', '00'])",
  new_code: "(ARRAY['00', 'L1', '00', 'T1', '00', '00', 'S2', 'S4'])",
  operation: "(ARRAY['card.issue', 'card.lock', 'card.unlock', 'card.temporary-lock', 'card.unlock', 'card.activate', 'card.restrict.lost', 'card.restrict.closed'])",
};

/** Status changes `g = $3 .. $4` of `$5`, as {@link AUDIT_BATCH_SQL} spreads its entries. */
const HISTORY_BATCH_SQL = `
INSERT INTO card_status_history (public_id, card_key, partner_id, individual_id, old_status, new_status, old_status_code, new_status_code, operation, reason, request_id, created_at)
SELECT ${publicId('history')}, card_key, $1::text, individual_id, ${TRANSITIONS.old_status}[t], ${TRANSITIONS.new_status}[t], ${TRANSITIONS.old_code}[t],
       ${TRANSITIONS.new_code}[t], ${TRANSITIONS.operation}[t], CASE WHEN t >= 7 THEN 'customer request' END, gen_random_uuid()::text, created_at
FROM (
  SELECT g, CASE WHEN m.measured THEN $7::text ELSE o.individual_id END AS individual_id,
         CASE WHEN m.measured THEN ${measuredCardKey('1 + (g * 7919) % $8::bigint')} ELSE o.card_key END AS card_key,
         1 + floor(r.t * 8)::int AS t,
         now() - interval '3 years' + (g::float8 / $5::float8) * interval '3 years' AS created_at
  FROM generate_series($3::bigint, $4::bigint) AS g
  CROSS JOIN LATERAL (SELECT ${isMeasured('$6::bigint', '$5::bigint')} AS measured) AS m
  LEFT JOIN ${NUMBERED_CARDS} o ON NOT m.measured AND o.partner_id = $1::text AND o.n = ${otherCard('$9::bigint')}
  CROSS JOIN LATERAL (SELECT random() AS t, g AS drawn_for) AS r
  OFFSET 0
) AS change
ORDER BY g`;

/** Refuses a shape whose measured individual holds more than its partner, or whose other rows would have no card to name. */
export function checkShape(shape: PartnerShape): void {
  const m = shape.measured;
  const problems = [
    m.cards > shape.cards - 1 && 'the measured individual needs fewer cards than its partner (the others are copied)',
    m.activeCards > m.cards && 'more ACTIVE cards than cards',
    m.auditEntries > shape.auditEntries && 'more audit entries than its partner',
    m.statusHistory > shape.statusHistory && 'more status changes than its partner',
    shape.individuals < 2 && 'at least two individuals: the measured one and one more',
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`bad shape: ${problems.join('; ')}`);
}

/** md5-derived id of seedIndividuals' individual g of a run (scripts/seed-cards `seededId`). */
function seededOnboardingId(partnerId: string, nonce: string, g: number): string {
  return crypto.createHash('md5').update(`${partnerId}:${nonce}:onboarding:${g}`).digest('hex').slice(0, 24);
}

/** Seeds one partner of the shape; the tables are vacuumed by the caller. */
export async function seedListPartner(
  db: Database,
  size: PartnerSize,
  shape: PartnerShape,
  o: { batchSize: number; progress?: (what: string) => void }
): Promise<SeededPartner> {
  checkShape(shape);
  const started = Date.now();
  const partnerId = crypto.randomBytes(12).toString('hex');
  const progress = o.progress ?? (() => undefined);
  const m = shape.measured;

  progress(`${size}: ${(shape.cards - m.cards).toLocaleString('en')} cards over ${(shape.individuals - 1).toLocaleString('en')} individuals`);
  await seedCards(db, {
    partnerId,
    count: shape.cards - m.cards,
    individuals: shape.individuals - 1,
    batchSize: o.batchSize,
    vacuum: false,
    progress: (n) => progress(`${size}: ${n.toLocaleString('en')} cards`),
  });

  const nonce = crypto.randomBytes(6).toString('hex');
  await seedIndividuals(db, { partnerId, nonce, count: 1, cardCount: 1 });
  const individualId = seededOnboardingId(partnerId, nonce, 0);

  await db.query(`INSERT INTO ${NUMBERED_CARDS} (partner_id, n, card_key, individual_id)
                  SELECT partner_id, row_number() OVER (ORDER BY card_key) - 1, card_key, individual_id FROM cards WHERE partner_id = $1 AND individual_id IS NOT NULL`, [partnerId]);
  const others = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${NUMBERED_CARDS} WHERE partner_id = $1`, [partnerId])).rows[0]!.n);
  if (others === 0) throw new Error(`${size}: the partner's other individuals hold no card`);

  progress(`${size}: the measured individual's ${m.cards.toLocaleString('en')} cards`);
  await db.query(MEASURED_CARDS_SQL, [partnerId, nonce, m.cards, individualId, m.activeCards, others, String(clientIdBase(nonce))]);

  for (const [what, sql, total, measured] of [
    ['audit entries', AUDIT_BATCH_SQL, shape.auditEntries, m.auditEntries],
    ['status changes', HISTORY_BATCH_SQL, shape.statusHistory, m.statusHistory],
  ] as const) {
    for (let first = 0; first < total; first += o.batchSize) {
      const last = Math.min(total, first + o.batchSize) - 1;
      await db.query(sql, [partnerId, nonce, first, last, total, measured, individualId, m.cards, others]);
      progress(`${size}: ${(last + 1).toLocaleString('en')} ${what}`);
    }
  }
  return { size, partnerId, individualId, shape, seconds: (Date.now() - started) / 1000 };
}

/** The partner's rows as the bench's routes see them, to check a seed against its shape. */
export async function countSeeded(db: Database, p: { partnerId: string; individualId: string }): Promise<PartnerShape> {
  const one = async (sql: string, params: unknown[]) => Number((await db.query<{ n: string }>(sql, params)).rows[0]!.n);
  const { partnerId, individualId } = p;
  return {
    individuals: await one("SELECT count(*) AS n FROM individual_onboardings WHERE partner_id = $1 AND provisioning = 'complete'", [partnerId]),
    cards: await one('SELECT count(*) AS n FROM cards WHERE partner_id = $1', [partnerId]),
    auditEntries: await one('SELECT count(*) AS n FROM audit_log WHERE partner_id = $1', [partnerId]),
    statusHistory: await one('SELECT count(*) AS n FROM card_status_history WHERE partner_id = $1', [partnerId]),
    measured: {
      cards: await one('SELECT count(*) AS n FROM cards WHERE individual_id = $1', [individualId]),
      activeCards: await one("SELECT count(*) AS n FROM cards WHERE individual_id = $1 AND status = 'ACTIVE'", [individualId]),
      auditEntries: await one('SELECT count(*) AS n FROM audit_log WHERE individual_id = $1', [individualId]),
      statusHistory: await one('SELECT count(*) AS n FROM card_status_history WHERE individual_id = $1', [individualId]),
    },
  };
}

/** The seed a database holds (`bench_lists_seed`), or undefined when it holds none. */
export async function readListsSeed(db: { query: Database['query'] }): Promise<ListsSeed | undefined> {
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass('bench_lists_seed')::text AS t");
  if (!exists.rows[0]?.t) return undefined;
  const rows = await db.query<{ size: PartnerSize; partner_id: string; individual_id: string; shape: PartnerShape; seconds: string; total_seconds: string }>(
    'SELECT size, partner_id, individual_id, shape, seconds, total_seconds FROM bench_lists_seed'
  );
  const bySize = (size: PartnerSize): SeededPartner | undefined => {
    const row = rows.rows.find((r) => r.size === size);
    return row && { size, partnerId: row.partner_id.trim(), individualId: row.individual_id.trim(), shape: row.shape, seconds: Number(row.seconds) };
  };
  const large = bySize('large');
  const small = bySize('small');
  if (!large || !small) return undefined;
  return { large, small, seconds: Number(rows.rows[0]!.total_seconds) };
}

/**
 * Seeds both partners of `shape` into a migrated database, vacuums, checks every count against the
 * shape and records the seed in `bench_lists_seed`. Refuses a database that holds a seed already.
 */
export async function seedLists(db: Database, shape: ListsShape, o: { batchSize?: number; progress?: (what: string) => void } = {}): Promise<ListsSeed> {
  if (await readListsSeed(db)) throw new Error('this database holds a seed of bench:lists already (bench_lists_seed)');
  const started = Date.now();
  const batchSize = o.batchSize ?? 100_000;
  await db.query(`CREATE TABLE IF NOT EXISTS bench_lists_seed (
    size text PRIMARY KEY CHECK (size IN ('large', 'small')),
    partner_id char(24) NOT NULL,
    individual_id char(24) NOT NULL,
    shape jsonb NOT NULL,
    seconds numeric NOT NULL,
    total_seconds numeric NOT NULL,
    seeded_at timestamptz NOT NULL DEFAULT now()
  )`);
  await db.query(`DROP TABLE IF EXISTS ${NUMBERED_CARDS}`);
  await db.query(`CREATE UNLOGGED TABLE ${NUMBERED_CARDS} (partner_id char(24) NOT NULL, n bigint NOT NULL, card_key text NOT NULL, individual_id char(24) NOT NULL, PRIMARY KEY (partner_id, n))`);
  try {
    const small = await seedListPartner(db, 'small', shape.small, { batchSize, ...(o.progress ? { progress: o.progress } : {}) });
    const large = await seedListPartner(db, 'large', shape.large, { batchSize, ...(o.progress ? { progress: o.progress } : {}) });
    o.progress?.('VACUUM (ANALYZE)');
    await db.query(`DROP TABLE ${NUMBERED_CARDS}`);
    await db.query('VACUUM (ANALYZE) partners, b2b_tenants, users, individual_onboardings, cards, card_search_links, card_search_terms, audit_log, card_status_history');
    for (const p of [small, large]) {
      const counted = await countSeeded(db, p);
      if (JSON.stringify(counted) !== JSON.stringify(p.shape)) throw new Error(`${p.size} partner ${p.partnerId}: seeded ${JSON.stringify(counted)}, not ${JSON.stringify(p.shape)}`);
    }
    const seconds = (Date.now() - started) / 1000;
    for (const p of [small, large]) {
      await db.query('INSERT INTO bench_lists_seed (size, partner_id, individual_id, shape, seconds, total_seconds) VALUES ($1, $2, $3, $4, $5, $6)', [
        p.size,
        p.partnerId,
        p.individualId,
        JSON.stringify(p.shape),
        p.seconds,
        seconds,
      ]);
    }
    return { small, large, seconds };
  } finally {
    await db.query(`DROP TABLE IF EXISTS ${NUMBERED_CARDS}`).catch(() => undefined);
  }
}

async function cli(): Promise<void> {
  const { values } = parseArgs({ options: { 'database-url': { type: 'string' }, smoke: { type: 'boolean', default: false }, batch: { type: 'string' } } });
  const url = values['database-url'] || process.env.DATABASE_URL;
  if (!url) throw new Error('no database: pass --database-url or set DATABASE_URL');
  const batchSize = values.batch === undefined ? 100_000 : Number(values.batch);
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error('--batch must be a positive integer');
  const log = createLogger({ level: 'warn' });
  // No query timeout: a batch or the VACUUM of a million rows can take longer than the gateway's 15 s.
  const db = new Database(url, { max: 1, log, queryTimeoutMs: 0 });
  try {
    await migrate(db, log);
    const seed = await seedLists(db, values.smoke ? SMOKE_SHAPE : LISTS_SHAPE, { batchSize, progress: (what) => process.stderr.write(`seed:lists: ${what}\n`) });
    process.stdout.write(`${JSON.stringify(seed)}\n`);
  } finally {
    await db.close();
  }
}

if (require.main === module) {
  cli().catch((err: unknown) => {
    process.stderr.write(`seed:lists failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
