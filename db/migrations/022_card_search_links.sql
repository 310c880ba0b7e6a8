-- Issue 22, S5: the card list's search counted from the partner's searched values instead of the
-- cards table (docs/card-search.md, "Search terms"). Number 020 stays unused: its migration (the
-- same tables filled at boot) was reverted before any deployment and never ran anywhere.
--
-- This migration only creates the tables (empty), their indexes and the triggers that keep them:
-- its own work does not grow with the number of cards (it reads whether one exists), so the
-- gateway's start (and the second worker's wait for the migration lock) does not wait for a
-- backfill. Cards that exist already are linked afterwards by a background job in batches
-- (gateway/cards/search-links.ts, `npm run cards:search-links`); until it marks the backfill done,
-- searchCards reads the cards table as before. The triggers exist from this migration's commit on
-- (CREATE TRIGGER waits for the transactions writing cards, and blocks new writes until the
-- commit), so every card written after it, by old or new code, is linked by its own statement:
-- the backfill only has to reach the cards written before.
--
-- What it can wait for is a lock on cards: CREATE TRIGGER takes SHARE ROW EXCLUSIVE, which waits
-- for any transaction that wrote cards and has not ended (a session idle in transaction), a
-- VACUUM or ANALYZE of cards (an anti-wraparound autovacuum too), a CREATE INDEX CONCURRENTLY, and
-- every card write queues behind that wait. lock_timeout bounds it: after 5 s of waiting for one
-- lock the migration fails (SQLSTATE 55P03), rolls back whole, and with it the gateway's start;
-- the next start tries it again. SET LOCAL: the runner (gateway/db/migrate.ts) runs each migration
-- in its own transaction (BEGIN … COMMIT on one connection, PostgreSQL and PGlite alike), so the
-- setting ends with it and never reaches another statement of that pooled connection. It is set
-- on the server: the pool's query_timeout (15 s) only stops the client waiting, and would leave
-- the CREATE TRIGGER waiting on the server, and the card writes behind it.
SET LOCAL lock_timeout = '5s';

-- A development or benchmark database that ran the reverted migration 020 holds tables, triggers
-- and a function of the same names (never deployed anywhere): dropped here, so this migration runs
-- there too. Elsewhere nothing is dropped and no lock is taken on cards by this block.
DO $$
BEGIN
  IF to_regclass('card_search_terms') IS NOT NULL THEN
    DROP TRIGGER IF EXISTS cards_search_links_insert ON cards;
    DROP TRIGGER IF EXISTS cards_search_links_change ON cards;
    DROP FUNCTION IF EXISTS card_search_links_insert(), card_search_links_change();
    DROP TABLE IF EXISTS card_search_links, card_search_terms;
  END IF;
END
$$;

-- The partner's posting list inside the trigram index: a partner's search reads its own values only.
-- btree_gin is a trusted extension (PostgreSQL >= 13); PGlite loads it in gateway/db/embedded.ts.
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- Every distinct lower-cased value of one partner's cards.card_mask (field 1), cards.nickname (2)
-- and cards.embossed_name (3). Values no card of the partner holds any more are deleted by the
-- job's pruning (pruneSearchTerms, within its interval; docs/card-search.md "Retention").
CREATE TABLE card_search_terms (
  partner_id char(24) NOT NULL,
  field      smallint NOT NULL CHECK (field IN (1, 2, 3)),
  term       text NOT NULL,
  PRIMARY KEY (partner_id, field, term)
);

-- One trigram index per field: a search counts field by field, and a mask prefix (`5355 70`, 8,500
-- values) must not be rechecked against the nicknames' and names' entries.
CREATE INDEX card_search_terms_mask_trgm_idx ON card_search_terms USING gin (partner_id, term gin_trgm_ops) WHERE field = 1;
CREATE INDEX card_search_terms_nickname_trgm_idx ON card_search_terms USING gin (partner_id, term gin_trgm_ops) WHERE field = 2;
CREATE INDEX card_search_terms_embossed_trgm_idx ON card_search_terms USING gin (partner_id, term gin_trgm_ops) WHERE field = 3;

-- One row per card and searched field that has a value, with what the list filters and orders by,
-- so that counts and sorts are index-only. The foreign key makes a pruning that races a new link
-- fail (and retry at its next pass) instead of leaving a link without its value.
CREATE TABLE card_search_links (
  card_key   text NOT NULL,
  field      smallint NOT NULL CHECK (field IN (1, 2, 3)),
  partner_id char(24) NOT NULL,
  term       text NOT NULL,
  status     text NOT NULL,
  type       text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (card_key, field),
  FOREIGN KEY (partner_id, field, term) REFERENCES card_search_terms (partner_id, field, term)
);
-- A value's cards of one partner (and field, status, type): the count and the sort of a search, and
-- the foreign key's check when a value is pruned.
CREATE INDEX card_search_links_term_idx ON card_search_links (partner_id, term, field, status, type) INCLUDE (created_at, card_key);

-- The backfill's state, one row: the last card key linked (batches go in card_key order) and when
-- every card was (searchCards reads the links from then on). Its row lock is the job's mutex: a
-- batch takes it FOR UPDATE SKIP LOCKED, so one instance links at a time.
CREATE TABLE card_search_backfill (
  only_row       boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  linked_through text,
  done_at        timestamptz
);

-- The row-level functions below plan their statements on each call (plan_cache_mode =
-- force_custom_plan): PL/pgSQL would otherwise keep, for the life of a connection, generic plans
-- made when these tables were empty, right after this migration, and a pooled connection that
-- linked a card then went on reading the two million links of a backfilled database sequentially
-- for every card write (`WHERE card_key = …` is not unique in the links: measured, 186 ms per status
-- change instead of 2). The set-based ones (the insert trigger, the backfill batch) keep cached
-- plans: the foreign key's checks they cause, one per link, would otherwise be planned one by one
-- too (their lookups are unique, so a plan cached early still uses the index), and the one
-- statement among them that reads the links by card is dynamic SQL, planned on each call.

-- Makes sure each (partner, field, value) exists and stays until this transaction ends: inserted
-- when missing, then locked FOR KEY SHARE, which the pruner's DELETE waits for. A value the pruner
-- deleted between the insert (which found it) and the lock is inserted again.
CREATE FUNCTION card_search_keep_terms(p_partners bpchar[], p_fields smallint[], p_terms text[]) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
DECLARE
  wanted integer;
  kept integer;
BEGIN
  IF p_terms IS NULL THEN
    RETURN;
  END IF;
  SELECT count(*) INTO wanted FROM (SELECT DISTINCT p, f, t FROM unnest(p_partners, p_fields, p_terms) AS u (p, f, t)) AS d;
  FOR attempt IN 1..10 LOOP
    INSERT INTO card_search_terms (partner_id, field, term)
    SELECT DISTINCT p, f, t FROM unnest(p_partners, p_fields, p_terms) AS u (p, f, t) ORDER BY 1, 2, 3
    ON CONFLICT DO NOTHING;
    WITH locked AS (
      SELECT 1 FROM card_search_terms s
      JOIN (SELECT DISTINCT p, f, t FROM unnest(p_partners, p_fields, p_terms) AS u (p, f, t)) AS d ON s.partner_id = d.p AND s.field = d.f AND s.term = d.t
      FOR KEY SHARE OF s
    )
    SELECT count(*) INTO kept FROM locked;
    IF kept = wanted THEN
      RETURN;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'card search values kept deleted by a concurrent pruning';
END
$$;

-- Links one card from its current values: a link per field that has a value (inserted or
-- updated), none for the others. Used by the update trigger and, set-based, by the backfill.
CREATE FUNCTION card_search_link_card(c cards) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  PERFORM card_search_keep_terms(array_agg(c.partner_id), array_agg(v.field), array_agg(left(lower(v.value), 256)))
  FROM (VALUES (1::smallint, c.card_mask), (2::smallint, c.nickname), (3::smallint, c.embossed_name)) AS v (field, value)
  WHERE v.value <> '';
  INSERT INTO card_search_links (card_key, field, partner_id, term, status, type, created_at)
  SELECT c.card_key, v.field, c.partner_id, left(lower(v.value), 256), c.status, c.type, c.created_at
  FROM (VALUES (1::smallint, c.card_mask), (2::smallint, c.nickname), (3::smallint, c.embossed_name)) AS v (field, value)
  WHERE v.value <> ''
  ON CONFLICT (card_key, field) DO UPDATE SET partner_id = EXCLUDED.partner_id, term = EXCLUDED.term, status = EXCLUDED.status, type = EXCLUDED.type, created_at = EXCLUDED.created_at;
  DELETE FROM card_search_links l
  USING (VALUES (1::smallint, c.card_mask), (2::smallint, c.nickname), (3::smallint, c.embossed_name)) AS v (field, value)
  WHERE l.card_key = c.card_key AND l.field = v.field AND coalesce(v.value, '') = '';
END
$$;

-- Inserts: one statement-level trigger (the seed inserts 100,000 cards per statement).
CREATE FUNCTION card_search_links_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM card_search_keep_terms(array_agg(d.partner_id), array_agg(d.field), array_agg(d.term))
  FROM (
    SELECT DISTINCT c.partner_id, v.field, left(lower(v.value), 256) AS term
    FROM inserted c CROSS JOIN LATERAL (VALUES (1::smallint, c.card_mask), (2::smallint, c.nickname), (3::smallint, c.embossed_name)) AS v (field, value)
    WHERE v.value <> ''
  ) AS d;
  INSERT INTO card_search_links (card_key, field, partner_id, term, status, type, created_at)
  SELECT c.card_key, v.field, c.partner_id, left(lower(v.value), 256), c.status, c.type, c.created_at
  FROM inserted c CROSS JOIN LATERAL (VALUES (1::smallint, c.card_mask), (2::smallint, c.nickname), (3::smallint, c.embossed_name)) AS v (field, value)
  WHERE v.value <> '';
  RETURN NULL;
END
$$;

-- Updates of what a link holds (the WHEN clause of the trigger: a SET of the same values does not
-- fire it). With the same values (compared lower-cased) the card's links are updated in place; a
-- card without links (not backfilled yet) or with a changed value is linked from its new row.
CREATE FUNCTION card_search_links_update() RETURNS trigger
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
DECLARE
  moved integer;
BEGIN
  IF OLD.partner_id = NEW.partner_id
     AND lower(OLD.card_mask) IS NOT DISTINCT FROM lower(NEW.card_mask)
     AND lower(nullif(OLD.nickname, '')) IS NOT DISTINCT FROM lower(nullif(NEW.nickname, ''))
     AND lower(nullif(OLD.embossed_name, '')) IS NOT DISTINCT FROM lower(nullif(NEW.embossed_name, '')) THEN
    IF (OLD.card_key, OLD.status, OLD.type, OLD.created_at) IS NOT DISTINCT FROM (NEW.card_key, NEW.status, NEW.type, NEW.created_at) THEN
      RETURN NULL; -- a change of letter case only
    END IF;
    UPDATE card_search_links SET card_key = NEW.card_key, status = NEW.status, type = NEW.type, created_at = NEW.created_at
    WHERE card_key = OLD.card_key;
    GET DIAGNOSTICS moved = ROW_COUNT;
    IF moved > 0 THEN
      RETURN NULL;
    END IF;
  END IF;
  IF OLD.card_key <> NEW.card_key THEN
    DELETE FROM card_search_links WHERE card_key = OLD.card_key;
  END IF;
  PERFORM card_search_link_card(NEW);
  RETURN NULL;
END
$$;

CREATE FUNCTION card_search_links_delete() RETURNS trigger
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  DELETE FROM card_search_links WHERE card_key = OLD.card_key;
  RETURN NULL;
END
$$;

CREATE TRIGGER cards_search_links_insert AFTER INSERT ON cards
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION card_search_links_insert();
CREATE TRIGGER cards_search_links_update
  AFTER UPDATE OF card_key, partner_id, card_mask, nickname, embossed_name, status, type, created_at ON cards
  FOR EACH ROW
  WHEN (OLD.card_key IS DISTINCT FROM NEW.card_key OR OLD.partner_id IS DISTINCT FROM NEW.partner_id
        OR OLD.card_mask IS DISTINCT FROM NEW.card_mask OR OLD.nickname IS DISTINCT FROM NEW.nickname
        OR OLD.embossed_name IS DISTINCT FROM NEW.embossed_name OR OLD.status IS DISTINCT FROM NEW.status
        OR OLD.type IS DISTINCT FROM NEW.type OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION card_search_links_update();
CREATE TRIGGER cards_search_links_delete AFTER DELETE ON cards
  FOR EACH ROW EXECUTE FUNCTION card_search_links_delete();

-- One backfill batch: the keys of the next `p_limit` cards after the cursor, in card_key order,
-- read without a lock (the cursor moves to the last key read: never to a key a concurrent card
-- replacement gave a card, which a locking read would hand back after its recheck, jumping past
-- cards not linked yet); then the cards that still hold those keys are locked FOR SHARE NOWAIT by
-- key (an update of one of them waits for this batch, then its trigger applies the update on top
-- of the links written here: never overwritten by values read before it) and linked from their
-- locked rows. A card whose key changed between the read and the lock is skipped: its update's
-- trigger linked it under its new key. The last batch (fewer keys than asked) checks, before it
-- locks anything, that every card the earlier batches read has links, then sets done_at
-- (card_search_backfill_missing; cards found without them, counted in `missing`, send the cursor
-- back to the start, so the next batches go over every card again). Answers how many cards were
-- linked, whether the backfill is done, and `missing`; `busy` when another instance holds the
-- state row.
--
-- Waits: a batch never collects waits while it holds its cards. NOWAIT: a card a write holds
-- (an uncommitted update or delete, a multi-statement card transaction) fails the batch at once
-- (SQLSTATE 55P03, nothing written; the job tries it again after a pause) instead of waiting for
-- it card after card. The one wait left is a value a concurrent card write has just inserted,
-- uncommitted (the batch's INSERT … ON CONFLICT of the value waits for that transaction; there
-- is no NOWAIT form of it): lock_timeout gives that up after 20 ms (55P03 as well), and bounds
-- any other lock wait the same way. So a card write waiting for a batch's card waits for the
-- batch's own work (about 0.1-0.3 s at 2,000 cards), never for other writes, and a cycle (a card
-- transaction that inserted a value the batch waits for, then updates a card the batch holds)
-- ends by the batch's lock_timeout, 20 ms after the batch began to wait, long before the card
-- write's deadlock check (deadlock_timeout, 1 s by default): a partner's write never gives up
-- first as long as deadlock_timeout stays above the batch's time from its card lock to its value
-- inserts plus 20 ms (tens of milliseconds).
CREATE FUNCTION card_search_backfill_batch(p_limit integer, OUT linked integer, OUT done boolean, OUT busy boolean, OUT missing integer)
LANGUAGE plpgsql SET lock_timeout = '20ms' AS $$
DECLARE
  v_after text;
  v_read text[];
  v_keys text[];
  v_count integer;
BEGIN
  linked := 0;
  busy := false;
  missing := 0;
  SELECT b.linked_through, b.done_at IS NOT NULL INTO v_after, done FROM card_search_backfill b FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    busy := true;
    done := (SELECT b.done_at IS NOT NULL FROM card_search_backfill b);
    RETURN;
  END IF;
  IF done THEN
    RETURN;
  END IF;
  -- coalesce rather than `v_after IS NULL OR …`: a generic plan keeps the index range condition.
  SELECT array_agg(k.card_key ORDER BY k.card_key) INTO v_read
  FROM (SELECT c.card_key FROM cards c WHERE c.card_key > coalesce(v_after, '') ORDER BY c.card_key LIMIT p_limit) AS k;
  v_count := coalesce(array_length(v_read, 1), 0);
  done := v_count < p_limit;
  -- The last batch: before it locks a card, whether the batches before it left a card without links.
  IF done AND v_after IS NOT NULL THEN
    missing := card_search_backfill_missing(v_after);
  END IF;
  IF missing > 0 THEN
    RAISE WARNING 'card search links: % cards the backfill went past have no links; the backfill starts over', missing;
    done := false;
    UPDATE card_search_backfill SET linked_through = NULL, done_at = NULL;
    RETURN;
  END IF;
  IF v_count > 0 THEN
    SELECT array_agg(k.card_key ORDER BY k.card_key) INTO v_keys
    FROM (SELECT c.card_key FROM cards c WHERE c.card_key = ANY (v_read) ORDER BY c.card_key FOR SHARE NOWAIT) AS k;
    linked := coalesce(array_length(v_keys, 1), 0);
  END IF;
  IF linked > 0 THEN
    PERFORM card_search_keep_terms(array_agg(d.partner_id), array_agg(d.field), array_agg(d.term))
    FROM (
      SELECT DISTINCT c.partner_id, v.field, left(lower(v.value), 256) AS term
      FROM cards c CROSS JOIN LATERAL (VALUES (1::smallint, c.card_mask), (2::smallint, c.nickname), (3::smallint, c.embossed_name)) AS v (field, value)
      WHERE c.card_key = ANY (v_keys) AND v.value <> ''
    ) AS d;
    INSERT INTO card_search_links (card_key, field, partner_id, term, status, type, created_at)
    SELECT c.card_key, v.field, c.partner_id, left(lower(v.value), 256), c.status, c.type, c.created_at
    FROM cards c CROSS JOIN LATERAL (VALUES (1::smallint, c.card_mask), (2::smallint, c.nickname), (3::smallint, c.embossed_name)) AS v (field, value)
    WHERE c.card_key = ANY (v_keys) AND v.value <> ''
    ON CONFLICT (card_key, field) DO UPDATE SET partner_id = EXCLUDED.partner_id, term = EXCLUDED.term, status = EXCLUDED.status, type = EXCLUDED.type, created_at = EXCLUDED.created_at
    WHERE (card_search_links.partner_id, card_search_links.term, card_search_links.status, card_search_links.type, card_search_links.created_at)
      IS DISTINCT FROM (EXCLUDED.partner_id, EXCLUDED.term, EXCLUDED.status, EXCLUDED.type, EXCLUDED.created_at);
    EXECUTE 'DELETE FROM card_search_links l
      USING cards c CROSS JOIN LATERAL (VALUES (1::smallint, c.card_mask), (2::smallint, c.nickname), (3::smallint, c.embossed_name)) AS v (field, value)
      WHERE c.card_key = ANY ($1) AND l.card_key = c.card_key AND l.field = v.field AND coalesce(v.value, '''') = '''''
    USING v_keys;
  END IF;
  UPDATE card_search_backfill SET linked_through = coalesce(v_read[v_count], v_after), done_at = CASE WHEN done THEN now() END;
END
$$;

-- The backfill's safety net before its mark: how many cards at or below the cursor (the cards the
-- earlier batches read) have no link at all although they have a value. The keys without a link
-- first (an anti-join of the two primary keys, index-only), then those few cards' values: about
-- 1 s at a million cards (docs/performance.md S5), once per backfill, before the last batch locks
-- any card (no card write waits for it). Not a per-field check: reading every card's values took
-- 6-13 s at a million cards, and a batch links all of a card's fields or none. Dynamic SQL:
-- planned for the tables' sizes of the moment. It finds what the backfill itself missed; a card
-- written while the triggers did not fire (session_replication_role = replica, pg_restore
-- --disable-triggers, ALTER TABLE cards DISABLE TRIGGER) after the backfill's mark is never
-- found: the triggers must stay on for cards (docs/card-search.md, "Deployment").
CREATE FUNCTION card_search_backfill_missing(p_through text) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  missing integer;
BEGIN
  EXECUTE 'WITH unlinked AS MATERIALIZED (
      SELECT c.card_key FROM cards c WHERE c.card_key <= $1 AND NOT EXISTS (SELECT 1 FROM card_search_links l WHERE l.card_key = c.card_key))
    SELECT count(*)::int FROM unlinked u JOIN cards c ON c.card_key = u.card_key WHERE c.card_mask <> '''' OR c.nickname <> '''' OR c.embossed_name <> '''''
  INTO missing USING p_through;
  RETURN missing;
END
$$;

-- One batch of the pruning (pruneSearchTerms): the next `p_limit` values after the cursor in key
-- order; of those no link references, the ones a card write holds are skipped (FOR UPDATE SKIP
-- LOCKED: the pruning never waits for a writer, so it is never one side of a deadlock with one)
-- and the others deleted. Answers the batch's last key (no row: the end, or another instance is
-- pruning: the state row, taken FOR UPDATE SKIP LOCKED as the backfill does, lets one instance at
-- a time) and the count. It holds no card, so no card write waits for it but a write of a value
-- it has just locked (a statement's time): lock_timeout 200 ms, should anything make it wait
-- (a table lock), then 55P03 and the batch is left for the next pass.
CREATE FUNCTION card_search_prune_batch(p_partner bpchar, p_field smallint, p_term text, p_limit integer)
RETURNS TABLE (partner_id bpchar, field integer, term text, deleted integer)
LANGUAGE sql SET lock_timeout = '200ms' AS $$
WITH mutex AS (
  SELECT 1 FROM card_search_backfill FOR UPDATE SKIP LOCKED
), batch AS (
  SELECT s.partner_id, s.field, s.term FROM card_search_terms s
  WHERE (s.partner_id, s.field, s.term) > (p_partner, p_field, p_term) AND EXISTS (SELECT 1 FROM mutex)
  ORDER BY s.partner_id, s.field, s.term LIMIT p_limit
), unheld AS (
  SELECT s.partner_id, s.field, s.term FROM card_search_terms s JOIN batch b ON s.partner_id = b.partner_id AND s.field = b.field AND s.term = b.term
  WHERE NOT EXISTS (SELECT 1 FROM card_search_links l WHERE l.partner_id = s.partner_id AND l.term = s.term AND l.field = s.field)
  FOR UPDATE OF s SKIP LOCKED
), gone AS (
  DELETE FROM card_search_terms t USING unheld u
  WHERE t.partner_id = u.partner_id AND t.field = u.field AND t.term = u.term
    AND NOT EXISTS (SELECT 1 FROM card_search_links l WHERE l.partner_id = t.partner_id AND l.term = t.term AND l.field = t.field)
  RETURNING 1
)
SELECT last.partner_id, last.field::int, last.term, (SELECT count(*) FROM gone)::int
FROM (SELECT b.partner_id, b.field, b.term FROM batch b ORDER BY b.partner_id DESC, b.field DESC, b.term DESC LIMIT 1) AS last
$$;

-- A database without cards (a new installation, a test) has nothing to backfill: marked done at
-- once. The triggers above hold cards against writes until this commits, so no card slips between.
INSERT INTO card_search_backfill (linked_through, done_at) SELECT NULL, CASE WHEN EXISTS (SELECT 1 FROM cards) THEN NULL ELSE now() END;
