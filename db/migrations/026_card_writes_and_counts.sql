-- Issue 33: card writes whose cost does not grow with the partner's cards, and the card list's
-- total without a count over them (docs/card-search.md, "Card writes" and "Total").
--
-- 1. The search links (migration 022) are kept field by field: a card write rewrites only the links
--    of the values it changes, and plans its statements once per connection (a generic plan cannot
--    read a table sequentially here: enable_seqscan is off in these functions, so a plan made
--    while the tables were empty still uses the indexes).
-- 2. A value a card stops holding is deleted when the card write commits, if no card of the partner
--    holds it any more and no other transaction is linking it (FOR UPDATE SKIP LOCKED: never a wait
--    on another writer); a value skipped so is left to the pruning job.
-- 3. card_counts: the partner's cards by status and type, kept by triggers in the card write's own
--    transaction, in slots a transaction takes without waiting (card_count_slot), filled here.
--
-- Like 022 it waits for a lock on cards (CREATE TRIGGER), and card writes queue behind that wait:
-- after 5 s it gives up and rolls back whole, and the gateway's next start tries again.
SET LOCAL lock_timeout = '5s';

-- ---------------------------------------------------------------------------------------------
-- 1. The search links, field by field.
-- ---------------------------------------------------------------------------------------------

-- One value of one card: locked FOR KEY SHARE if it exists (a deletion, the pruning's or a card
-- write's, waits for that lock or skips the value), else inserted by this transaction (which no
-- other can then delete). A value deleted between the two, or inserted by another transaction
-- meanwhile (the insert then waits for it and does nothing), is taken at the next attempt. One or
-- two primary-key statements.
CREATE FUNCTION card_search_keep_term(p_partner bpchar, p_field smallint, p_term text) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off AS $$
BEGIN
  FOR attempt IN 1..10 LOOP
    PERFORM 1 FROM card_search_terms WHERE partner_id = p_partner AND field = p_field AND term = p_term FOR KEY SHARE;
    IF FOUND THEN
      RETURN;
    END IF;
    INSERT INTO card_search_terms (partner_id, field, term) VALUES (p_partner, p_field, p_term) ON CONFLICT DO NOTHING;
    IF FOUND THEN
      RETURN;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'card search value kept deleted by a concurrent pruning';
END
$$;

-- Makes sure each (partner, field, value) exists and stays until this transaction ends, as
-- card_search_keep_term, in key order (two writers inserting the same new values never wait for
-- each other in a circle). A few values (a card's write) one by one: two primary-key statements at
-- most each, about 20 µs, where one statement over the set costs about 0.3 ms of planning and
-- joins. More (the seed's 100,000-card statements, the backfill's batches) in one statement per
-- attempt: the values that exist locked, the others inserted; a value neither locked nor inserted
-- (another transaction inserted it meanwhile, or deleted it between the two) is taken at the next
-- attempt, with a new snapshot.
CREATE OR REPLACE FUNCTION card_search_keep_terms(p_partners bpchar[], p_fields smallint[], p_terms text[]) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  v record;
  missing integer;
BEGIN
  IF p_terms IS NULL THEN
    RETURN;
  END IF;
  IF cardinality(p_terms) <= 16 THEN
    FOR v IN SELECT DISTINCT p, f, t FROM unnest(p_partners, p_fields, p_terms) AS u (p, f, t) ORDER BY 1, 2, 3 LOOP
      PERFORM card_search_keep_term(v.p, v.f, v.t);
    END LOOP;
    RETURN;
  END IF;
  FOR attempt IN 1..10 LOOP
    WITH wanted AS MATERIALIZED (
      SELECT DISTINCT p, f, t FROM unnest(p_partners, p_fields, p_terms) AS u (p, f, t)
    ), locked AS MATERIALIZED (
      SELECT s.partner_id, s.field, s.term FROM card_search_terms s JOIN wanted w ON s.partner_id = w.p AND s.field = w.f AND s.term = w.t
      FOR KEY SHARE OF s
    ), added AS (
      INSERT INTO card_search_terms (partner_id, field, term)
      SELECT w.p, w.f, w.t FROM wanted w
      WHERE NOT EXISTS (SELECT 1 FROM locked l WHERE l.partner_id = w.p AND l.field = w.f AND l.term = w.t)
      ORDER BY 1, 2, 3
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM wanted) - (SELECT count(*) FROM locked) - (SELECT count(*) FROM added) INTO missing;
    IF missing = 0 THEN
      RETURN;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'card search values kept deleted by a concurrent pruning';
END
$$;

-- Links one card from its current values (every field): the path of a key or partner change and
-- of a card the backfill has not reached yet. As in 022, with cached plans.
CREATE OR REPLACE FUNCTION card_search_link_card(c cards) RETURNS void
LANGUAGE plpgsql SET enable_seqscan = off AS $$
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

-- An update of what a link holds (the trigger's WHEN clause of 022 is kept). A new status, type or
-- creation time moves the card's links in place; each value that changed (compared as linked:
-- lower-cased, its first 256 characters) is kept and its one link rewritten, inserted or deleted;
-- the values that did not change are not touched. A key or partner change, or a change of a card
-- without links (the backfill has not reached it), links the card from its new row, as 022 did.
CREATE OR REPLACE FUNCTION card_search_links_update() RETURNS trigger
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  old_terms text[] := ARRAY[nullif(left(lower(OLD.card_mask), 256), ''), nullif(left(lower(OLD.nickname), 256), ''), nullif(left(lower(OLD.embossed_name), 256), '')];
  new_terms text[] := ARRAY[nullif(left(lower(NEW.card_mask), 256), ''), nullif(left(lower(NEW.nickname), 256), ''), nullif(left(lower(NEW.embossed_name), 256), '')];
BEGIN
  IF OLD.card_key <> NEW.card_key OR OLD.partner_id <> NEW.partner_id THEN
    DELETE FROM card_search_links WHERE card_key = OLD.card_key;
    PERFORM card_search_link_card(NEW);
    RETURN NULL;
  END IF;
  IF (OLD.status, OLD.type, OLD.created_at) IS DISTINCT FROM (NEW.status, NEW.type, NEW.created_at) THEN
    UPDATE card_search_links SET status = NEW.status, type = NEW.type, created_at = NEW.created_at WHERE card_key = NEW.card_key;
    IF NOT FOUND AND NOT (new_terms[1] IS NULL AND new_terms[2] IS NULL AND new_terms[3] IS NULL) THEN
      PERFORM card_search_link_card(NEW);
      RETURN NULL;
    END IF;
  END IF;
  FOR f IN 1..3 LOOP
    CONTINUE WHEN old_terms[f] IS NOT DISTINCT FROM new_terms[f];
    IF new_terms[f] IS NULL THEN
      DELETE FROM card_search_links WHERE card_key = NEW.card_key AND field = f;
    ELSE
      PERFORM card_search_keep_term(NEW.partner_id, f::smallint, new_terms[f]);
      UPDATE card_search_links SET term = new_terms[f] WHERE card_key = NEW.card_key AND field = f;
      IF NOT FOUND THEN
        -- No link to rewrite: the field was empty, or the card is not linked yet (the backfill has
        -- not reached it), which then gets every link from its new row.
        IF old_terms[f] IS NOT NULL OR NOT EXISTS (SELECT 1 FROM card_search_links WHERE card_key = NEW.card_key) THEN
          PERFORM card_search_link_card(NEW);
          RETURN NULL;
        END IF;
        INSERT INTO card_search_links (card_key, field, partner_id, term, status, type, created_at)
        VALUES (NEW.card_key, f, NEW.partner_id, new_terms[f], NEW.status, NEW.type, NEW.created_at)
        ON CONFLICT (card_key, field) DO UPDATE SET term = EXCLUDED.term, status = EXCLUDED.status, type = EXCLUDED.type, created_at = EXCLUDED.created_at;
      END IF;
    END IF;
  END LOOP;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION card_search_links_delete() RETURNS trigger
LANGUAGE plpgsql SET enable_seqscan = off AS $$
BEGIN
  DELETE FROM card_search_links WHERE card_key = OLD.card_key;
  RETURN NULL;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- 2. The values no card holds any more, deleted with the card write.
-- ---------------------------------------------------------------------------------------------

-- The values a card stopped holding (a changed mask, nickname or embossed name, a changed partner, a
-- deleted card), deleted when the card write commits if no card of the partner links them any more.
-- A deferred trigger: it runs once the transaction's statements are done (a transaction that drops
-- a value and links it again later keeps it), and holds what it deletes only for the commit's
-- time. Per value, two statements: the lock, taken only on a value no link references and only if
-- no other transaction holds it (SKIP LOCKED: a writer linking it right now holds it FOR KEY SHARE,
-- a pruning batch FOR UPDATE; the value is then left to the pruning job), and the delete, whose new
-- snapshot, taken once the lock is held, sees every link committed before: a linker locks the
-- value before it writes its link (card_search_keep_term, card_search_keep_terms), so one that
-- committed in between is seen, and none can start before this transaction ends. So this never
-- waits for another transaction and never deletes a value a link references (the foreign key's
-- check of the delete finds none; should it find one, the delete alone is given up, in a
-- subtransaction entered only to delete, never the card write).
CREATE FUNCTION card_search_release_terms() RETURNS trigger
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  old_terms text[] := ARRAY[nullif(left(lower(OLD.card_mask), 256), ''), nullif(left(lower(OLD.nickname), 256), ''), nullif(left(lower(OLD.embossed_name), 256), '')];
  new_terms text[] := ARRAY[NULL, NULL, NULL]::text[];
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.partner_id = NEW.partner_id THEN
    new_terms := ARRAY[nullif(left(lower(NEW.card_mask), 256), ''), nullif(left(lower(NEW.nickname), 256), ''), nullif(left(lower(NEW.embossed_name), 256), '')];
  END IF;
  FOR f IN 1..3 LOOP
    CONTINUE WHEN old_terms[f] IS NULL OR old_terms[f] IS NOT DISTINCT FROM new_terms[f];
    PERFORM 1 FROM card_search_terms t
    WHERE t.partner_id = OLD.partner_id AND t.field = f AND t.term = old_terms[f]
      AND NOT EXISTS (SELECT 1 FROM card_search_links l WHERE l.partner_id = t.partner_id AND l.term = t.term AND l.field = t.field)
    FOR UPDATE OF t SKIP LOCKED;
    CONTINUE WHEN NOT FOUND;
    BEGIN
      DELETE FROM card_search_terms t
      WHERE t.partner_id = OLD.partner_id AND t.field = f AND t.term = old_terms[f]
        AND NOT EXISTS (SELECT 1 FROM card_search_links l WHERE l.partner_id = t.partner_id AND l.term = t.term AND l.field = t.field);
    EXCEPTION WHEN foreign_key_violation OR lock_not_available THEN
      -- A link that did not lock its value first (none of the triggers writes one so): the value
      -- is left to the pruning rather than the card write failed.
      NULL;
    END;
  END LOOP;
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER cards_search_terms_release_update
  AFTER UPDATE OF partner_id, card_mask, nickname, embossed_name ON cards
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD.partner_id IS DISTINCT FROM NEW.partner_id OR OLD.card_mask IS DISTINCT FROM NEW.card_mask
        OR OLD.nickname IS DISTINCT FROM NEW.nickname OR OLD.embossed_name IS DISTINCT FROM NEW.embossed_name)
  EXECUTE FUNCTION card_search_release_terms();
CREATE CONSTRAINT TRIGGER cards_search_terms_release_delete
  AFTER DELETE ON cards
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  EXECUTE FUNCTION card_search_release_terms();

-- ---------------------------------------------------------------------------------------------
-- 3. card_counts: the partner's cards by status and type.
-- ---------------------------------------------------------------------------------------------

-- The partner's cards of one status and type are the sum of `cards` over the slots. A transaction
-- adds its changes to slots it holds alone (card_count_slot), so concurrent card writes of one
-- partner neither queue on one row nor wait for each other here, and so cannot deadlock here.
CREATE TABLE card_counts (
  partner_id char(24) NOT NULL,
  status     text NOT NULL,
  type       text NOT NULL,
  slot       smallint NOT NULL,
  cards      bigint NOT NULL,
  PRIMARY KEY (partner_id, status, type, slot)
);

-- A slot of the partner that this transaction holds alone until it ends: a transaction-scoped
-- advisory lock of (partner, slot), tried without waiting from slot `backend pid mod 8` on, then
-- past the eighth. Every transaction that holds a slot is a connection or a prepared transaction,
-- so among max_connections + max_prepared_transactions + 8 slots one is free: the loop never
-- reaches its end. A slot this transaction took earlier is taken again (advisory locks nest).
CREATE FUNCTION card_count_slot(p_partner bpchar) RETURNS smallint
LANGUAGE plpgsql AS $$
DECLARE
  first integer := pg_backend_pid() % 8;
  slot integer;
BEGIN
  FOR i IN 0 .. 7 + current_setting('max_connections')::integer + current_setting('max_prepared_transactions')::integer LOOP
    slot := CASE WHEN i < 8 THEN (first + i) % 8 ELSE i END;
    IF pg_try_advisory_xact_lock(hashtextextended('card-counts:' || p_partner || ':' || slot, 0)) THEN
      RETURN slot;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'no card count slot free for partner %', p_partner;
END
$$;

-- Inserts and deletes: one statement-level trigger each, one row per partner, status and type of
-- the statement's cards (the seed inserts 100,000 cards per statement).
CREATE FUNCTION card_counts_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO card_counts AS c (partner_id, status, type, slot, cards)
  SELECT d.partner_id, d.status, d.type, card_count_slot(d.partner_id), d.n
  FROM (SELECT i.partner_id, i.status, i.type, count(*) AS n FROM inserted i GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) AS d
  ON CONFLICT (partner_id, status, type, slot) DO UPDATE SET cards = c.cards + EXCLUDED.cards;
  RETURN NULL;
END
$$;

CREATE FUNCTION card_counts_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO card_counts AS c (partner_id, status, type, slot, cards)
  SELECT d.partner_id, d.status, d.type, card_count_slot(d.partner_id), -d.n
  FROM (SELECT o.partner_id, o.status, o.type, count(*) AS n FROM deleted o GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) AS d
  ON CONFLICT (partner_id, status, type, slot) DO UPDATE SET cards = c.cards + EXCLUDED.cards;
  RETURN NULL;
END
$$;

-- Updates: a row-level trigger that fires only when the partner, status or type changes (transition
-- tables cannot go with a column list, and a statement-level trigger would run for every update of
-- cards, nickname changes included).
CREATE FUNCTION card_counts_updated() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  old_slot smallint := card_count_slot(OLD.partner_id);
BEGIN
  INSERT INTO card_counts AS c (partner_id, status, type, slot, cards)
  SELECT v.partner_id, v.status, v.type, CASE WHEN v.partner_id = OLD.partner_id THEN old_slot ELSE card_count_slot(v.partner_id) END, v.cards
  FROM (VALUES (OLD.partner_id, OLD.status, OLD.type, -1), (NEW.partner_id, NEW.status, NEW.type, 1)) AS v (partner_id, status, type, cards)
  ON CONFLICT (partner_id, status, type, slot) DO UPDATE SET cards = c.cards + EXCLUDED.cards;
  RETURN NULL;
END
$$;

CREATE FUNCTION card_counts_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM card_counts;
  RETURN NULL;
END
$$;

CREATE TRIGGER cards_counts_insert AFTER INSERT ON cards
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION card_counts_inserted();
CREATE TRIGGER cards_counts_delete AFTER DELETE ON cards
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION card_counts_deleted();
CREATE TRIGGER cards_counts_update AFTER UPDATE OF partner_id, status, type ON cards
  FOR EACH ROW
  WHEN (OLD.partner_id IS DISTINCT FROM NEW.partner_id OR OLD.status IS DISTINCT FROM NEW.status OR OLD.type IS DISTINCT FROM NEW.type)
  EXECUTE FUNCTION card_counts_updated();
CREATE TRIGGER cards_counts_truncate AFTER TRUNCATE ON cards
  FOR EACH STATEMENT EXECUTE FUNCTION card_counts_truncated();

-- Counts every card again, all partners, into slot 0: the migration's fill, and the repair after
-- card writes made while the triggers did not fire (docs/operator-guide.md). It holds card writes
-- (SHARE: they wait, reads go on) from its first statement to the end of its transaction; about
-- 0.2-0.5 s per million cards (docs/performance.md). Answers how many cards it counted.
CREATE FUNCTION card_counts_recount() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  counted bigint;
BEGIN
  LOCK TABLE cards IN SHARE MODE;
  DELETE FROM card_counts;
  INSERT INTO card_counts (partner_id, status, type, slot, cards)
  SELECT partner_id, status, type, 0, count(*) FROM cards GROUP BY 1, 2, 3;
  SELECT coalesce(sum(cards), 0) INTO counted FROM card_counts;
  RETURN counted;
END
$$;

-- The triggers above hold card writes until this commits (CREATE TRIGGER's lock), so the count
-- and the triggers agree: every card written before is counted here, every one after by a trigger.
SELECT card_counts_recount();
