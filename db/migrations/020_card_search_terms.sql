-- Issue 22, S5: the card list's search counted without reading the cards table
-- (docs/card-search.md, "Search terms"). A search matches a card when one of its three searched
-- fields (mask, nickname, embossed name), lower-cased, contains the text. Those fields repeat a lot
-- across cards (every mask shares its BIN and ends in one of 10,000 numbers; nicknames and company
-- names are picked from short lists), so the searched values are kept once each in a dictionary
-- with a trigram index, and each card is linked to its values in a btree. A search then reads
-- the dictionary (the few thousand distinct values that match) and the links of those values,
-- index-only, instead of rechecking 10,000+ wide card rows one heap block each.

-- Every distinct lower-cased value of cards.card_mask (field 1), cards.nickname (2) and
-- cards.embossed_name (3), with its field (values no card holds any more stay: harmless, a search
-- reads them and finds no link).
CREATE TABLE card_search_terms (
  term  text NOT NULL,
  field smallint NOT NULL CHECK (field IN (1, 2, 3)),
  PRIMARY KEY (term, field)
);

-- One row per card and searched field that has a value: the card's searched values, with what
-- the list filters and orders by, so that counts and sorts are index-only.
CREATE TABLE card_search_links (
  card_key   text NOT NULL,
  field      smallint NOT NULL CHECK (field IN (1, 2, 3)), -- 1 mask, 2 nickname, 3 embossed name
  partner_id char(24) NOT NULL,
  term       text NOT NULL,
  status     text NOT NULL,
  type       text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (card_key, field)
);

INSERT INTO card_search_terms (term, field)
SELECT DISTINCT lower(v.value), v.field
FROM cards CROSS JOIN LATERAL (VALUES (1, card_mask), (2, nickname), (3, embossed_name)) AS v (field, value)
WHERE v.value IS NOT NULL AND v.value <> '';

INSERT INTO card_search_links (card_key, field, partner_id, term, status, type, created_at)
SELECT c.card_key, v.field, c.partner_id, lower(v.value), c.status, c.type, c.created_at
FROM cards c CROSS JOIN LATERAL (VALUES (1, c.card_mask), (2, c.nickname), (3, c.embossed_name)) AS v (field, value)
WHERE v.value IS NOT NULL AND v.value <> '';

-- One trigram index per field: a search counts field by field, and a mask prefix (`5355 70`, 8,500
-- values) must not be rechecked against the nicknames' and names' index entries.
CREATE INDEX card_search_terms_mask_trgm_idx ON card_search_terms USING gin (term gin_trgm_ops) WHERE field = 1;
CREATE INDEX card_search_terms_nickname_trgm_idx ON card_search_terms USING gin (term gin_trgm_ops) WHERE field = 2;
CREATE INDEX card_search_terms_embossed_trgm_idx ON card_search_terms USING gin (term gin_trgm_ops) WHERE field = 3;
-- A value's cards of one partner (and field, status, type): the count and the sort of a search.
CREATE INDEX card_search_links_term_idx ON card_search_links (partner_id, term, field, status, type) INCLUDE (created_at, card_key);

ANALYZE card_search_terms;
ANALYZE card_search_links;

-- Kept by triggers on cards: a statement-level one for inserts (the seed inserts 100,000 cards per
-- statement), a row-level one for the updates of a linked column (card_key changes on a
-- replacement, status on every lock) and for deletes.
CREATE FUNCTION card_search_links_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO card_search_terms (term, field)
  SELECT DISTINCT lower(v.value), v.field
  FROM inserted CROSS JOIN LATERAL (VALUES (1, card_mask), (2, nickname), (3, embossed_name)) AS v (field, value)
  WHERE v.value IS NOT NULL AND v.value <> ''
  ORDER BY 1, 2
  ON CONFLICT (term, field) DO NOTHING;
  INSERT INTO card_search_links (card_key, field, partner_id, term, status, type, created_at)
  SELECT c.card_key, v.field, c.partner_id, lower(v.value), c.status, c.type, c.created_at
  FROM inserted c CROSS JOIN LATERAL (VALUES (1, c.card_mask), (2, c.nickname), (3, c.embossed_name)) AS v (field, value)
  WHERE v.value IS NOT NULL AND v.value <> '';
  RETURN NULL;
END
$$;

CREATE FUNCTION card_search_links_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM card_search_links WHERE card_key = OLD.card_key;
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO card_search_terms (term, field)
    SELECT DISTINCT lower(v.value), v.field
    FROM (VALUES (1, NEW.card_mask), (2, NEW.nickname), (3, NEW.embossed_name)) AS v (field, value)
    WHERE v.value IS NOT NULL AND v.value <> ''
    ORDER BY 1, 2
    ON CONFLICT (term, field) DO NOTHING;
    INSERT INTO card_search_links (card_key, field, partner_id, term, status, type, created_at)
    SELECT NEW.card_key, v.field, NEW.partner_id, lower(v.value), NEW.status, NEW.type, NEW.created_at
    FROM (VALUES (1, NEW.card_mask), (2, NEW.nickname), (3, NEW.embossed_name)) AS v (field, value)
    WHERE v.value IS NOT NULL AND v.value <> '';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER cards_search_links_insert AFTER INSERT ON cards
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION card_search_links_insert();
CREATE TRIGGER cards_search_links_change
  AFTER DELETE OR UPDATE OF card_key, partner_id, card_mask, nickname, embossed_name, status, type, created_at ON cards
  FOR EACH ROW EXECUTE FUNCTION card_search_links_change();
